package docgen

import "strings"

// The lists below stand in for RockBench's faker library. Every entry is
// printable ASCII without '"' or '\' (checked by a test), so values are
// copied into the JSON without escaping.

// loremWords feed about, greeting, description and tags. Every length from
// 1 to maxWordLen must occur: appendText finishes a text with a word of an
// exact length.
var loremWords = []string{
	"a", "e", "i", "u",
	"ac", "ad", "at", "et", "ex", "id", "in", "ut", "mi",
	"cum", "dis", "dui", "est", "mus", "nam", "nec", "non", "per", "sed", "sem", "sit", "vel", "leo", "dia",
	"ante", "arcu", "cras", "diam", "duis", "eget", "elit", "enim", "eros", "erat", "nibh", "nisi", "nisl",
	"nunc", "odio", "orci", "proin", "quam", "quis", "urna", "amet", "ipsum", "dolor", "massa", "metus",
	"morbi", "netus", "nulla", "purus", "risus", "sapien", "augue", "justo", "lacus", "lorem", "magna",
	"mauris", "neque", "porta", "velit", "vitae", "felis", "lectus", "ligula", "libero", "mollis",
	"tellus", "tempor", "turpis", "varius", "aenean", "aliquam", "aliquet", "auctor", "blandit",
	"congue", "cursus", "dictum", "donec", "egestas", "etiam", "euismod", "semper", "sodales",
	"integer", "interdum", "iaculis", "lacinia", "laoreet", "maximus", "pretium", "rhoncus", "sagittis",
	"tempus", "tortor", "dapibus", "posuere", "finibus", "gravida", "commodo", "feugiat", "molestie",
	"natoque", "ornare", "potenti", "quisque", "rutrum", "sociis", "vivamus", "volutpat", "bibendum",
	"convallis", "curabitur", "dignissim", "efficitur", "elementum", "facilisis", "fermentum",
	"hendrerit", "imperdiet", "malesuada", "phasellus", "pharetra", "placerat", "praesent", "pulvinar",
	"ridiculus", "tincidunt", "tristique", "ultrices", "ultricies", "vehicula", "venenatis", "vulputate",
	"accumsan", "eleifend", "faucibus", "fringilla", "habitant", "inceptos", "lobortis", "maecenas",
	"penatibus", "porttitor", "senectus", "suscipit", "torquent", "adipiscing",
	"parturient", "vestibulum", "consequat", "facilisi", "himenaeos", "nascetur", "sollicitudin",
	"consectetur", "condimentum", "scelerisque", "suspendisse", "ullamcorper", "pellentesque",
	"fusce", "nullam", "mattis", "luctus", "primis", "magnis", "montes", "conubia", "nostra",
	"class", "aptent", "taciti", "sociosqu", "litora", "platea", "dictumst", "habitasse", "hac",
}

const maxWordLen = 12

// padLen leaves room for a word, a comma or full stop and a space.
const padLen = 16

// padWord is a word followed by spaces up to padLen bytes.
type padWord struct {
	b [padLen]byte
	n uint8 // length of the word
}

func newPadWord(w string) padWord {
	p := padWord{n: uint8(len(w))}
	for i := range p.b {
		p.b[i] = ' '
	}
	copy(p.b[:], w)
	return p
}

var firstNames = []string{
	"Aiden", "Alice", "Amara", "Andre", "Anna", "Arjun", "Ava", "Beatriz", "Ben", "Bianca", "Caleb",
	"Carmen", "Chen", "Chloe", "Craig", "Daniel", "Diego", "Elena", "Eleanore", "Eli", "Emma", "Ethan",
	"Fatima", "Felix", "Grace", "Hana", "Hugo", "Ibrahim", "Ines", "Ivan", "Jade", "James", "Jonas",
	"Julia", "Kai", "Kenji", "Lara", "Leo", "Lina", "Lucas", "Maya", "Max", "Mei", "Mila", "Nadia",
	"Noah", "Nora", "Omar", "Oscar", "Priya", "Quinn", "Rafael", "Raymond", "Rico", "Rickey", "Rosa",
	"Ruby", "Sam", "Sara", "Selma", "Sofia", "Tariq", "Theo", "Tyler", "Uma", "Victor", "Wendy",
	"Xavier", "Yara", "Yusuf", "Zara", "Zoe", "Liam", "Olivia", "Mateo", "Aria", "Hiro", "Amina",
	"Pablo", "Freya", "Milo", "Iris", "Kofi", "Lena", "Nico", "Rhea", "Sven", "Talia", "Wei", "Zane",
}

var lastNames = []string{
	"Wallis", "Hancock", "Sprowl", "Leath", "Muldoon", "Tuck", "Flinn", "Porras", "Milling", "Verde",
	"Brandt", "Adams", "Baker", "Castillo", "Chen", "Dubois", "Evans", "Fischer", "Garcia", "Haddad",
	"Ito", "Jensen", "Kowalski", "Lambert", "Moreau", "Nakamura", "Novak", "Okafor", "Patel", "Quinn",
	"Rossi", "Santos", "Schmidt", "Silva", "Tanaka", "Ueda", "Varga", "Weber", "Xu", "Yilmaz", "Zhang",
	"Andersen", "Bergstrom", "Costa", "Dimitrov", "Eriksen", "Ferreira", "Gallagher", "Horvat", "Ivanova",
	"Johansson", "Kim", "Larsen", "Mendes", "Nielsen", "Oliveira", "Petrov", "Ramirez", "Sato", "Torres",
	"Vasquez", "Walsh", "Young", "Ziegler", "Bauer", "Carter", "Duarte", "Estrada", "Fontaine", "Greco",
	"Hughes", "Ibarra", "Jovanovic", "Keller", "Lopez", "Murphy", "Nguyen", "Ortega", "Price", "Reyes",
}

var companies = []string{
	"Celmax", "Acmetron", "Bluefin", "Corvex", "Datalux", "Ecolabs", "Fluxon", "Glacier", "Helixa",
	"Ionix", "Jetwave", "Kinetica", "Lumora", "Magnetra", "Nexora", "Orbix", "Pyxis", "Quantix",
	"Rubicon", "Solarix", "Terranova", "Ultrex", "Vortexa", "Wavefront", "Xenith", "Yonder", "Zentrix",
	"Aquanet", "Brightly", "Cobalt", "Dynamo", "Everest", "Fathom", "Gridlock", "Harbor", "Indigo",
	"Juniper", "Keystone", "Lattice", "Meridian", "Nimbus", "Obsidian", "Paragon", "Quasar", "Radiant",
	"Sequoia", "Tundra", "Umbra", "Vertex", "Willow", "Xylo", "Yellowtail", "Zephyr", "Animax", "Biotic",
	"Cognita", "Digitex", "Enviro", "Frostbyte", "Genomix", "Hypernova", "Isotope", "Jumbotron",
	"Kraken", "Lumina", "Monolith", "Neutron", "Omnigen", "Photon", "Quicksilver", "Rockfield",
	"Streamline", "Telemetrix", "Unison", "Velocity", "Wireframe", "Zorbit",
}

var tlds = []string{"com", "net", "org", "io", "biz", "gov", "co", "info"}

var mailHosts = []string{"mail.com", "inbox.org", "post.net", "example.com", "fastmail.io", "letters.co"}

var cities = []string{
	"Norfolk", "Austin", "Boston", "Chicago", "Denver", "El Paso", "Fresno", "Houston", "Irvine",
	"Jackson", "Kansas City", "Lincoln", "Memphis", "Nashville", "Oakland", "Portland", "Raleigh",
	"Seattle", "Tampa", "Tucson", "Atlanta", "Baltimore", "Cleveland", "Dallas", "Detroit", "Eugene",
	"Fargo", "Glendale", "Hartford", "Indianapolis", "Jersey City", "Knoxville", "Las Vegas", "Madison",
	"Miami", "Newark", "Omaha", "Phoenix", "Providence", "Reno", "Sacramento", "San Diego", "San Jose",
	"Santa Fe", "Savannah", "Spokane", "St. Louis", "Toledo", "Tulsa", "Wichita", "Winston-Salem",
	"Albany", "Anchorage", "Boise", "Buffalo", "Charleston", "Columbus", "Des Moines", "Durham",
	"Honolulu", "Louisville", "Milwaukee", "Minneapolis", "New Orleans", "Orlando", "Pittsburgh",
	"Richmond", "Salt Lake City", "Tacoma", "Berlin", "Lisbon", "Madrid", "Oslo", "Prague", "Vienna",
	"Toronto", "Sydney", "Osaka", "Seoul", "Nairobi", "Lima", "Bogota", "Dublin", "Warsaw", "Helsinki",
}

var states = []string{
	"AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY",
	"LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND",
	"OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
}

var streetNames = []string{
	"Sherman", "Oak", "Maple", "Cedar", "Pine", "Elm", "Walnut", "Chestnut", "Willow", "Birch",
	"Highland", "Lakeview", "Hillside", "Riverside", "Sunset", "Park", "Washington", "Lincoln",
	"Jefferson", "Madison", "Franklin", "Adams", "Jackson", "Grant", "Church", "Mill", "Spring",
	"Union", "Market", "Bridge", "Forest", "Meadow", "Harbor", "Prospect", "Center", "Broad",
	"Dogwood", "Magnolia", "Poplar", "Sycamore", "Hawthorne", "Garfield", "Kingston", "Orchard",
}

var streetSuffixes = []string{
	"Road", "Street", "Avenue", "Lane", "Drive", "Court", "Place", "Boulevard", "Way", "Terrace",
}

// Derived lists, built once at start-up.
var (
	capWords   []string   // loremWords with a capital first letter
	padWords   []padWord  // loremWords for appendText's fixed-size copies
	padCaps    []padWord  // capWords likewise
	wordsByLen [][]string // lorem words of each length 1..maxWordLen
	capsByLen  [][]string // capitalized lorem words of each length
	lowerFirst []string   // firstNames in lower case, for emails
	lowerLast  []string   // lastNames in lower case
	lowerComp  []string   // companies in lower case

	// The lists above padded for appendPad, entry for entry.
	padFirst, padLast, padComp                []padWord
	padLowerFirst, padLowerLast, padLowerComp []padWord
	padTLDs, padMailHosts, padCities          []padWord
	padStates, padStreets, padSuffixes        []padWord
)

func init() {
	capWords = make([]string, len(loremWords))
	wordsByLen = make([][]string, maxWordLen+1)
	capsByLen = make([][]string, maxWordLen+1)
	for i, w := range loremWords {
		capWords[i] = strings.ToUpper(w[:1]) + w[1:]
		if len(w) > maxWordLen {
			panic("docgen: lorem word longer than maxWordLen: " + w)
		}
		wordsByLen[len(w)] = append(wordsByLen[len(w)], w)
		capsByLen[len(w)] = append(capsByLen[len(w)], capWords[i])
	}
	padWords = make([]padWord, len(loremWords))
	padCaps = make([]padWord, len(loremWords))
	for i := range loremWords {
		padWords[i] = newPadWord(loremWords[i])
		padCaps[i] = newPadWord(capWords[i])
	}
	for n := 1; n <= maxWordLen; n++ {
		if len(wordsByLen[n]) == 0 {
			panic("docgen: no lorem word of every length")
		}
	}
	lowerFirst = lowerAll(firstNames)
	lowerLast = lowerAll(lastNames)
	lowerComp = lowerAll(companies)
	padFirst, padLast, padComp = padAll(firstNames), padAll(lastNames), padAll(companies)
	padLowerFirst, padLowerLast, padLowerComp = padAll(lowerFirst), padAll(lowerLast), padAll(lowerComp)
	padTLDs, padMailHosts, padCities = padAll(tlds), padAll(mailHosts), padAll(cities)
	padStates, padStreets, padSuffixes = padAll(states), padAll(streetNames), padAll(streetSuffixes)
}

func padAll(in []string) []padWord {
	out := make([]padWord, len(in))
	for i, s := range in {
		if len(s) > padLen {
			panic("docgen: list entry longer than padLen: " + s)
		}
		out[i] = newPadWord(s)
	}
	return out
}

func lowerAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}
