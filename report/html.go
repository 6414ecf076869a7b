package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"

	"github.com/freshbench/freshbench/report/internal/svg"
	"github.com/freshbench/freshbench/results"
)

// The page and its style are embedded so that a report is one file that
// opens offline: no CDN, no fonts, no scripts fetched from anywhere.
//
//go:embed assets/report.html.tmpl
var htmlTemplate string

//go:embed assets/report.css
var htmlCSS string

// HTML writes a self-contained HTML report of res. The charts are inline
// SVG drawn here, so the page needs neither JavaScript nor network access,
// and every string from the results file is escaped by html/template.
func HTML(w io.Writer, res *results.Result) error {
	if res == nil {
		return errors.New("html report: no result")
	}
	t, err := template.New("report").Funcs(template.FuncMap{"f": svg.Num}).Parse(htmlTemplate)
	if err != nil {
		return fmt.Errorf("html report template: %w", err)
	}
	// Render into memory first so that a template error never leaves half
	// a page behind.
	var buf bytes.Buffer
	if err := t.Execute(&buf, buildView(res)); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	_, err = buf.WriteTo(w)
	return err
}
