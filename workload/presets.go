package workload

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"
)

//go:embed presets/*.yaml
var presetFiles embed.FS

// Presets returns every preset, by name.
func Presets() ([]*File, error) {
	entries, err := presetFiles.ReadDir("presets")
	if err != nil {
		return nil, err
	}
	var out []*File
	for _, e := range entries {
		f, err := Preset(strings.TrimSuffix(e.Name(), ".yaml"))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *File) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// PresetPrefix begins the Path of a preset: preset:NAME.
const PresetPrefix = "preset:"

// Name is the preset's name, or the file's path.
func (f *File) Name() string { return strings.TrimPrefix(f.Path, PresetPrefix) }

// Preset returns the preset called name; an unknown name is an error
// that lists the known ones.
func Preset(name string) (*File, error) {
	data, err := PresetText(name)
	if err != nil {
		return nil, err
	}
	return Parse(PresetPrefix+name, data)
}

// PresetText returns the preset's file as shipped, to read or to copy
// and edit into a workload file of one's own.
func PresetText(name string) ([]byte, error) {
	data, err := presetFiles.ReadFile(path.Join("presets", name+".yaml"))
	if err != nil || strings.ContainsAny(name, "/.") {
		entries, _ := presetFiles.ReadDir("presets")
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
		}
		return nil, fmt.Errorf("no preset %q: want one of %s (freshbench presets lists them)", name, strings.Join(names, ", "))
	}
	return data, nil
}
