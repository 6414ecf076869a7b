package noop

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Type OIDs of the values the server reads and writes.
const (
	oidBool      = 16
	oidInt8      = 20
	oidInt4      = 23
	oidText      = 25
	oidJSON      = 114
	oidVoid      = 2278
	oidJSONB     = 3802
	oidInt4Array = 1007
	oidTextArray = 1009
	oidInt8Array = 1016
	oidJSONBArr  = 3807
)

// typeOIDs maps type names, as a cast writes them, to OIDs.
var typeOIDs = map[string]uint32{
	"text": oidText, "varchar": oidText, "bigint": oidInt8, "int8": oidInt8,
	"integer": oidInt4, "int": oidInt4, "int4": oidInt4, "jsonb": oidJSONB, "json": oidJSON,
	"boolean": oidBool, "bool": oidBool,
	"text[]": oidTextArray, "varchar[]": oidTextArray, "bigint[]": oidInt8Array, "int8[]": oidInt8Array,
	"integer[]": oidInt4Array, "int[]": oidInt4Array, "int4[]": oidInt4Array, "jsonb[]": oidJSONBArr,
}

// arrayOf maps an element type to its array type.
var arrayOf = map[uint32]uint32{oidText: oidTextArray, oidInt8: oidInt8Array, oidInt4: oidInt4Array, oidJSONB: oidJSONBArr}

// columnTypes are the types of freshbench's columns and result names.
var columnTypes = map[string]uint32{
	"_id": oidText, "generator_identifier": oidText, "_event_time": oidInt8, "_seq": oidInt8,
	"doc": oidJSONB, "tag": oidText, "n": oidInt8, "count": oidInt8, "server_version": oidText,
}

// stmtKind is what executing a statement does.
type stmtKind int

const (
	stmtEmpty     stmtKind = iota // nothing: an empty query or a comment
	stmtCommand                   // no rows, a command tag (CREATE, SET, …)
	stmtBegin                     // BEGIN
	stmtCommit                    // COMMIT
	stmtRollback                  // ROLLBACK
	stmtCreate                    // CREATE TABLE: the table exists from now on
	stmtDrop                      // DROP TABLE: forget the table
	stmtInsert                    // INSERT of rows, from unnest($arrays) or VALUES
	stmtCopy                      // COPY … FROM STDIN BINARY
	stmtFreshness                 // SELECT max(_event_time) … WHERE generator_identifier = $n
	stmtCount                     // SELECT count(*) … [WHERE generator_identifier = $n]
	stmtIDs                       // SELECT _id … WHERE … _id = ANY($n): the known probe ids
	stmtSeqs                      // SELECT _seq … WHERE generator_identifier = $n
	stmtSample                    // SELECT doc FROM t [LIMIT $n]: the kept documents
	stmtNoRows                    // any other SELECT from a table: no document is kept
	stmtOneRow                    // a SELECT without a table (an advisory lock) or SHOW: one row
)

type column struct {
	name string
	oid  uint32
}

// statement is one SQL statement as the server understands it.
type statement struct {
	kind   stmtKind
	tag    string // command tag of stmtCommand, stmtCreate, stmtDrop, and EXPLAIN's
	table  string // the table it reads or writes; "" for none
	params []uint32
	cols   []column
	// Parameters that carry values: the generator, the _ids, the limit
	// (-1 when absent); for an INSERT, the parameter of each column.
	genParam, idsParam, limitParam int
	insertCols                     []string
	insertArgs                     []int
	unnest                         bool
	// copyCols are the columns of a COPY, in order.
	copyCols []string
	value    string // the one row of stmtOneRow, as text; "" for void
}

// errSyntax is a statement the server does not understand; it answers
// with SQLSTATE 0A000 (feature_not_supported) and the statement.
type errSyntax struct{ sql, why string }

func (e *errSyntax) Error() string {
	sql := strings.Join(strings.Fields(e.sql), " ")
	if len(sql) > 200 {
		sql = sql[:200] + "…"
	}
	return fmt.Sprintf("freshbench noop does not understand this statement (%s): %s", e.why, sql)
}

// token is one lexical unit of SQL: a lowercased word, a quoted
// identifier as written, a $n parameter, a 'string', a number or
// punctuation.
type token struct {
	kind byte // 'w' word, 'q' quoted identifier, '$' parameter, 's' string, 'n' number, 'p' punctuation
	text string
	n    int // a parameter's number
}

func (t token) is(word string) bool { return t.kind == 'w' && t.text == word }

// ident reports whether t names a column or table, and which.
func (t token) ident() (string, bool) {
	if t.kind == 'w' || t.kind == 'q' {
		return t.text, true
	}
	return "", false
}

// tokenize splits sql into tokens; comments and blanks are dropped.
func tokenize(sql string) ([]token, error) {
	var out []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(sql); j++ {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c { // a doubled quote
						b.WriteByte(c)
						j++
						continue
					}
					break
				}
				b.WriteByte(sql[j])
			}
			if j >= len(sql) {
				return nil, &errSyntax{sql, "unterminated quote"}
			}
			kind := byte('q')
			if c == '\'' {
				kind = 's'
			}
			out = append(out, token{kind: kind, text: b.String()})
			i = j + 1
		case c == '$' && i+1 < len(sql) && isDigit(sql[i+1]):
			j := i + 1
			for j < len(sql) && isDigit(sql[j]) {
				j++
			}
			n, _ := strconv.Atoi(sql[i+1 : j])
			out = append(out, token{kind: '$', text: sql[i:j], n: n})
			i = j
		case isWordStart(c):
			j := i
			for j < len(sql) && (isWordStart(sql[j]) || isDigit(sql[j])) {
				j++
			}
			out = append(out, token{kind: 'w', text: strings.ToLower(sql[i:j])})
			i = j
		case isDigit(c):
			j := i
			for j < len(sql) && (isDigit(sql[j]) || sql[j] == '.') {
				j++
			}
			out = append(out, token{kind: 'n', text: sql[i:j]})
			i = j
		default:
			// Operators of several characters (::, ->>, @>, …) are one token.
			j := i + 1
			if strings.ContainsRune("(),;[]", rune(c)) {
				out = append(out, token{kind: 'p', text: sql[i:j]})
				i = j
				continue
			}
			for j < len(sql) && strings.ContainsRune(":-<>=@!|&~+*/%#^", rune(sql[j])) {
				j++
			}
			out = append(out, token{kind: 'p', text: sql[i:j]})
			i = j
		}
	}
	return out, nil
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isWordStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// splitStatements splits a simple query's tokens at top-level semicolons.
func splitStatements(toks []token) [][]token {
	var out [][]token
	start := 0
	for i, t := range toks {
		if t.kind == 'p' && t.text == ";" {
			if i > start {
				out = append(out, toks[start:i])
			}
			start = i + 1
		}
	}
	if start < len(toks) {
		out = append(out, toks[start:])
	}
	return out
}

// parseStatement classifies one statement: the statements freshbench's
// postgres target sends (its setup, writes, probes, audit and query
// workload, and the plan of each query checked before a run) and the
// usual session commands. Anything else is refused with errSyntax rather
// than answered with a guess.
func parseStatement(sql string, toks []token) (*statement, error) {
	st := &statement{genParam: -1, idsParam: -1, limitParam: -1}
	if len(toks) == 0 {
		st.kind = stmtEmpty
		return st, nil
	}
	var err error
	switch first := wordAt(toks, 0); first {
	case "begin", "start":
		st.kind, st.tag = stmtBegin, "BEGIN"
	case "commit", "end":
		st.kind, st.tag = stmtCommit, "COMMIT"
	case "rollback", "abort":
		st.kind, st.tag = stmtRollback, "ROLLBACK"
	case "set", "reset", "deallocate", "discard", "listen", "unlisten", "analyze", "vacuum":
		st.kind, st.tag = stmtCommand, strings.ToUpper(first)
		if st.tag == "DISCARD" || st.tag == "DEALLOCATE" {
			st.tag += " ALL"
		}
	case "create":
		err = parseCreate(st, toks)
	case "drop":
		err = parseDrop(st, toks)
	case "insert":
		err = parseInsert(st, toks)
	case "copy":
		err = parseCopy(st, toks)
	case "select":
		err = parseSelect(st, toks)
	case "show":
		err = parseShow(st, toks)
	case "explain":
		// The plan of a statement it understands, as the check before a
		// query run asks for each query's: one row, for the server
		// keeps no plan.
		inner, err := parseStatement(sql, toks[1:])
		if err != nil {
			return nil, err
		}
		st.kind, st.tag, st.cols = stmtOneRow, "EXPLAIN", []column{{"QUERY PLAN", oidText}}
		st.value, st.params = "freshbench noop: no plan", inner.params
		return st, nil
	default:
		err = errors.New("not a statement freshbench sends")
	}
	if err != nil {
		return nil, &errSyntax{sql, err.Error()}
	}
	st.params = paramTypes(toks, st)
	return st, nil
}

// wordAt is the i-th token when it is a word, else "".
func wordAt(toks []token, i int) string {
	if i < len(toks) && toks[i].kind == 'w' {
		return toks[i].text
	}
	return ""
}

// parseCreate reads CREATE TABLE and CREATE INDEX, of any kind.
func parseCreate(st *statement, toks []token) error {
	i := 1
	for w := wordAt(toks, i); w == "unlogged" || w == "unique" || w == "temporary" || w == "temp"; w = wordAt(toks, i) {
		i++
	}
	switch wordAt(toks, i) {
	case "table":
		st.kind, st.tag = stmtCreate, "CREATE TABLE"
		st.table = nameAfter(toks, i+1)
	case "index":
		st.kind, st.tag = stmtCommand, "CREATE INDEX"
		for j := i; j < len(toks); j++ {
			if toks[j].is("on") {
				st.table = nameAfter(toks, j+1)
				break
			}
		}
	default:
		return errors.New("CREATE of something other than a table or an index")
	}
	if st.table == "" {
		return errors.New("no table named")
	}
	return nil
}

// parseDrop reads DROP TABLE and DROP INDEX.
func parseDrop(st *statement, toks []token) error {
	switch wordAt(toks, 1) {
	case "table":
		st.kind, st.tag = stmtDrop, "DROP TABLE"
		st.table = nameAfter(toks, 2)
	case "index":
		st.kind, st.tag = stmtCommand, "DROP INDEX"
	default:
		return errors.New("DROP of something other than a table or an index")
	}
	return nil
}

// parseShow reads SHOW of a setting the server answers.
func parseShow(st *statement, toks []token) error {
	name := wordAt(toks, 1)
	if name == "" {
		return errors.New("SHOW without a name")
	}
	if _, ok := showValues[name]; !ok && name != "server_version" {
		return errors.New("unrecognized configuration parameter")
	}
	st.kind, st.cols = stmtOneRow, []column{{name, oidText}}
	st.value = showValues[name]
	return nil
}

// showValues answers SHOW; the version is filled in by the server.
var showValues = map[string]string{
	"server_encoding": "UTF8", "client_encoding": "UTF8", "standard_conforming_strings": "on",
	"datestyle": "ISO, MDY", "timezone": "UTC", "transaction_isolation": "read committed",
}

// nameAfter returns the table named at toks[i], past IF [NOT] EXISTS and
// ONLY, without a schema.
func nameAfter(toks []token, i int) string {
	for i < len(toks) && (toks[i].is("if") || toks[i].is("not") || toks[i].is("exists") || toks[i].is("only")) {
		i++
	}
	name := ""
	for i < len(toks) {
		id, ok := toks[i].ident()
		if !ok {
			break
		}
		name = id
		if i+1 < len(toks) && toks[i+1].kind == 'p' && toks[i+1].text == "." {
			i += 2
			continue
		}
		break
	}
	return name
}

// identList reads "( a, b, … )" at toks[i] and returns the names and the
// index after the closing parenthesis.
func identList(toks []token, i int) ([]string, int, bool) {
	if i >= len(toks) || toks[i].text != "(" {
		return nil, i, false
	}
	var names []string
	for i++; i < len(toks); i++ {
		if toks[i].text == ")" && toks[i].kind == 'p' {
			return names, i + 1, true
		}
		if toks[i].text == "," && toks[i].kind == 'p' {
			continue
		}
		id, ok := toks[i].ident()
		if !ok {
			return nil, i, false
		}
		names = append(names, id)
	}
	return nil, i, false
}

// parseInsert reads INSERT INTO t (cols) SELECT * FROM unnest($a, …) …
// or INSERT INTO t (cols) VALUES ($a, …) …, each with an optional
// RETURNING of columns.
func parseInsert(st *statement, toks []token) error {
	if len(toks) < 3 || !toks[1].is("into") {
		return fmt.Errorf("INSERT without INTO")
	}
	st.kind = stmtInsert
	st.table = nameAfter(toks, 2)
	cols, i, ok := columnList(toks, 3)
	if !ok || len(cols) == 0 {
		return fmt.Errorf("INSERT without a column list")
	}
	st.insertCols = cols
	// The parameters of the unnest call or the VALUES list, in order.
	for ; i < len(toks); i++ {
		if toks[i].is("unnest") || toks[i].is("values") {
			st.unnest = toks[i].is("unnest")
			break
		}
	}
	if i == len(toks) {
		return fmt.Errorf("INSERT from neither unnest($arrays) nor VALUES")
	}
	depth := 0
	for i++; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == 'p' && t.text == "(":
			depth++
		case t.kind == 'p' && t.text == ")":
			depth--
		case t.kind == '$' && depth == 1:
			st.insertArgs = append(st.insertArgs, t.n-1)
		}
		if depth == 0 {
			break
		}
	}
	if len(st.insertArgs) != len(cols) {
		return fmt.Errorf("INSERT of %d columns from %d parameters", len(cols), len(st.insertArgs))
	}
	for ; i < len(toks); i++ {
		if toks[i].is("returning") {
			for _, t := range toks[i+1:] {
				name, ok := t.ident()
				if !ok {
					continue
				}
				switch name {
				case "_seq", "_event_time", "generator_identifier":
					st.cols = append(st.cols, column{name, typeOfColumn(name)})
				default:
					return fmt.Errorf("RETURNING %s (only _seq, _event_time and generator_identifier are kept)", name)
				}
			}
			break
		}
	}
	return nil
}

// columnList reads the parenthesised column list that follows the table
// name, the first "(" from toks[from] on.
func columnList(toks []token, from int) ([]string, int, bool) {
	for from < len(toks) && toks[from].text != "(" {
		from++
	}
	return identList(toks, from)
}

// parseCopy reads COPY t (cols) FROM STDIN BINARY, as pgx's CopyFrom
// sends it.
func parseCopy(st *statement, toks []token) error {
	st.kind = stmtCopy
	st.table = nameAfter(toks, 1)
	cols, i, ok := columnList(toks, 2)
	if !ok {
		return fmt.Errorf("COPY without a column list")
	}
	st.copyCols = cols
	if i+1 >= len(toks) || !toks[i].is("from") || !toks[i+1].is("stdin") {
		return fmt.Errorf("COPY other than FROM STDIN")
	}
	binary := false
	for _, t := range toks[i+2:] {
		binary = binary || t.is("binary")
	}
	if !binary {
		return fmt.Errorf("COPY in a format other than binary")
	}
	return nil
}

// parseSelect classifies a SELECT by its result columns and its WHERE.
func parseSelect(st *statement, toks []token) error {
	items, from := selectList(toks)
	if len(items) == 0 {
		return fmt.Errorf("SELECT without result columns")
	}
	for _, it := range items {
		st.cols = append(st.cols, resultColumn(it))
	}
	if from < 0 {
		// Without a table: an advisory lock and the like, one row.
		if len(items) == 1 && len(items[0]) > 1 && (items[0][0].is("pg_advisory_xact_lock") || items[0][0].is("pg_advisory_lock")) {
			st.kind, st.cols[0].oid = stmtOneRow, oidVoid
			return nil
		}
		return fmt.Errorf("SELECT without a table")
	}
	st.table = nameAfter(toks, from+1)
	where, group := -1, false
	for i := from; i < len(toks); i++ {
		switch {
		case toks[i].is("where") && where < 0:
			where = i
		case toks[i].is("group"):
			group = true
		case toks[i].is("limit") && i+1 < len(toks) && toks[i+1].kind == '$':
			st.limitParam = toks[i+1].n - 1
		}
	}
	for i := max(where, 0); where >= 0 && i+2 < len(toks); i++ {
		if toks[i].is("generator_identifier") && toks[i+1].text == "=" && toks[i+2].kind == '$' {
			st.genParam = toks[i+2].n - 1
		}
		if toks[i].is("_id") && toks[i+1].text == "=" && toks[i+2].is("any") && i+4 < len(toks) && toks[i+4].kind == '$' {
			st.idsParam = toks[i+4].n - 1
		}
	}
	one := len(items) == 1
	first := items[0]
	switch {
	case one && len(first) > 3 && first[0].is("max") && first[2].is("_event_time") && st.genParam >= 0:
		st.kind = stmtFreshness
	case one && len(first) > 1 && first[0].is("count") && !group:
		st.kind = stmtCount
	case one && len(first) == 1 && first[0].is("_id") && st.idsParam >= 0:
		st.kind = stmtIDs
	case one && len(first) == 1 && first[0].is("_seq") && st.genParam >= 0 && st.limitParam < 0:
		st.kind = stmtSeqs
	case one && len(first) == 1 && first[0].is("doc") && where < 0:
		st.kind = stmtSample
	default:
		st.kind = stmtNoRows
	}
	return nil
}

// selectList splits the result columns of a SELECT at top-level commas
// and returns them with the index of its top-level FROM (-1 for none).
func selectList(toks []token) ([][]token, int) {
	var items [][]token
	depth, start := 0, 1
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == 'p' && t.text == "(":
			depth++
		case t.kind == 'p' && t.text == ")":
			depth--
		case depth == 0 && t.kind == 'p' && t.text == ",":
			items = append(items, toks[start:i])
			start = i + 1
		case depth == 0 && t.is("from"):
			return append(items, toks[start:i]), i
		}
	}
	return append(items, toks[start:]), -1
}

// resultColumn names and types one result column: its alias, or its
// column, or the function it calls.
func resultColumn(item []token) column {
	if n := len(item); n >= 2 && item[n-2].is("as") {
		name, _ := item[n-1].ident()
		c := resultColumn(item[:n-2])
		c.name = name
		return c
	}
	name, _ := item[0].ident()
	if len(item) > 1 && item[1].text == "(" {
		switch name {
		case "count":
			return column{name, oidInt8}
		case "max", "min":
			if len(item) > 2 {
				arg, _ := item[2].ident()
				return column{name, typeOfColumn(arg)}
			}
		}
		return column{name, oidText}
	}
	return column{name, typeOfColumn(name)}
}

func typeOfColumn(name string) uint32 {
	if oid, ok := columnTypes[name]; ok {
		return oid
	}
	return oidText
}

// paramTypes infers the type of each $n as the server would: from a
// cast after it, from the column it is compared with or inserted into,
// from LIMIT, or text.
func paramTypes(toks []token, st *statement) []uint32 {
	n := 0
	for _, t := range toks {
		if t.kind == '$' {
			n = max(n, t.n)
		}
	}
	types := make([]uint32, n)
	for i := range types {
		types[i] = oidText
	}
	for i, t := range toks {
		if t.kind != '$' {
			continue
		}
		p := t.n - 1
		prev := func(k int) token {
			if i-k >= 0 {
				return toks[i-k]
			}
			return token{}
		}
		switch {
		case i+2 < len(toks) && toks[i+1].text == "::":
			name := toks[i+2].text
			if i+4 < len(toks) && toks[i+3].text == "[" && toks[i+4].text == "]" {
				name += "[]"
			}
			if oid, ok := typeOIDs[name]; ok {
				types[p] = oid
			}
		case prev(1).is("limit") || prev(1).is("offset"):
			types[p] = oidInt8
		case prev(1).text == "(" && prev(2).is("any") && prev(3).text == "=":
			if col, ok := prev(4).ident(); ok {
				types[p] = arrayOf[typeOfColumn(col)]
			}
		case prev(1).text == "=":
			if col, ok := prev(2).ident(); ok {
				types[p] = typeOfColumn(col)
			}
		}
	}
	if st.kind == stmtInsert && !st.unnest {
		for c, p := range st.insertArgs {
			if p >= 0 && p < n && types[p] == oidText {
				types[p] = typeOfColumn(st.insertCols[c])
			}
		}
	}
	return types
}
