package kmhttp_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// pandasPython is Debian's interpreter, which has python3-pandas (.ci/run installs it).
const pandasPython = "/usr/bin/python3"

// pandasDescribe reads the CSV file and, for each case, prints describe(include='all') of
// the rows its mask keeps (numeric columns as floats, the others as text), as JSON.
// float_precision="round_trip" makes pandas read every float correctly rounded, as Go's
// strconv does; its default parser is faster and may miss the last bit.
const pandasDescribe = `
import json, math, sys
import pandas as pd
pd.set_option("compute.use_bottleneck", False)
pd.set_option("compute.use_numexpr", False)
path, cases = sys.argv[1], json.loads(sys.argv[2])
df = pd.read_csv(path, dtype={"S": object, "D": object, "DT": object, "B": object}, keep_default_na=False, na_values=[""], float_precision="round_trip")
out = {}
for name, mask in cases.items():
    part = df if mask == "" else df[eval(mask)]
    d = part.describe(include="all")
    cols = {}
    for c in d.columns:
        stats = {}
        for k, v in d[c].items():
            if isinstance(v, float) and math.isnan(v):
                v = None
            elif k in ("count", "unique", "freq") and v is not None:
                v = int(v)
            elif k == "top" and v is not None:
                v = str(v)
            stats[k] = v
        cols[c] = stats
    out[name] = {"rows": len(part), "columns": cols}
print(json.dumps(out))
`

// TestSummaryAgainstPandas runs the summary endpoint on generated data (nulls, ties,
// large and tiny magnitudes) loaded from CSV, with several filters, and compares every
// statistic with pandas' describe(include='all') of the same CSV filtered the same way:
// numbers to the last bit, counts, unique, top and freq exactly.
func TestSummaryAgainstPandas(t *testing.T) {
	if exec.Command(pandasPython, "-c", "import pandas").Run() != nil {
		t.Skip(pandasPython + " cannot import pandas (Debian package python3-pandas)")
	}
	dir := t.TempDir()
	writeGeneratedKM(t, dir, 20_000)
	s := memory.New().KM()
	err := s.Import(context.Background(), os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	handlers := map[string]*kmhttp.Handler{
		"native":   kmhttp.NewHandler(s),
		"fallback": kmhttp.NewHandler(struct{ km.Store }{s}),
	}
	// Each case: our filter expression and the same filter as a pandas mask.
	cases := map[string][2]string{
		"all":       {"", ""},
		"positive":  {"I gt 0", "df.I > 0"},
		"or":        {"S eq 'v1' or F lt 0", "(df.S == 'v1') | (df.F < 0)"},
		"null":      {"I eq null", "df.I.isna()"},
		"and":       {"D ge 2022-01-10 and TINY le 1e-300", "(df.D.fillna('') >= '2022-01-10') & (df.TINY <= 1e-300)"},
		"none":      {"I gt 1000", "df.I > 1000"},
		"single":    {"ID eq 7", "df.ID == 7"},
		"big/small": {"BIG gt 0 and DT lt 2023-11-14T22:13:40Z", "(df.BIG > 0) & df.DT.notna() & (df.DT.fillna('') < '2023-11-14T22:13:40Z')"},
	}
	masks := map[string]string{}
	for name, c := range cases {
		masks[name] = c[1]
	}
	arg, _ := json.Marshal(masks)
	var stderr bytes.Buffer
	cmd := exec.Command(pandasPython, "-c", pandasDescribe, filepath.Join(dir, "data", "r.csv"), string(arg))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pandas: %v\n%s", err, stderr.Bytes())
	}
	var pandas map[string]struct {
		Rows    int
		Columns map[string]map[string]any
	}
	if err := json.Unmarshal(out, &pandas); err != nil {
		t.Fatalf("pandas output: %v\n%s", err, out)
	}
	for name, c := range cases {
		for hname, h := range handlers {
			t.Run(hname+"/"+name, func(t *testing.T) {
				target := api + "/g/records/R/summary?sampleSize=1"
				if c[0] != "" {
					target += "&filterExpr=" + url.QueryEscape(c[0])
				}
				w := call(h, "GET", target, "")
				if w.Code != 200 {
					t.Fatalf("status %d: %s", w.Code, w.Body)
				}
				var got struct {
					Shape   []int
					Summary map[string]map[string]any
				}
				decodeStrict(t, w.Body.Bytes(), &got)
				want := pandas[name]
				if got.Shape[0] != want.Rows || got.Shape[1] != len(generatedFields) {
					t.Errorf("shape %v, pandas has %d rows of %d columns", got.Shape, want.Rows, len(generatedFields))
				}
				for _, f := range generatedFields {
					comparePandas(t, f.id, want.Columns[f.id], got.Summary[f.id])
				}
			})
		}
	}
}

// comparePandas compares our statistics of one field with pandas'.
func comparePandas(t *testing.T, field string, pandas, ours map[string]any) {
	t.Helper()
	if ours == nil {
		t.Errorf("%s: no statistics", field)
		return
	}
	names := map[string]string{"25%": "25_percentile", "50%": "50_percentile", "75%": "75_percentile"}
	if _, numeric := ours["mean"]; numeric {
		for _, k := range []string{"count", "mean", "std", "min", "25%", "50%", "75%", "max"} {
			ok := k
			if n, ok2 := names[k]; ok2 {
				ok = n
			}
			p, o := pandas[k], ours[ok]
			if p == nil || o == nil {
				if p != nil || o != nil {
					t.Errorf("%s.%s: ours %v, pandas %v", field, ok, o, p)
				}
				continue
			}
			if pf, of := p.(float64), o.(float64); math.Float64bits(pf) != math.Float64bits(of) && !(pf == 0 && of == 0) {
				t.Errorf("%s.%s: ours %v, pandas %v", field, ok, strconv.FormatFloat(of, 'g', -1, 64), strconv.FormatFloat(pf, 'g', -1, 64))
			}
		}
		return
	}
	top, _ := pandas["top"].(string)
	if field == "B" { // pandas prints Python's True/False; the API writes JSON's true/false
		top = strings.ToLower(top)
	}
	want := map[string]any{"count": pandas["count"], "unique": pandas["unique"], "top": nil, "freq": nil}
	if pandas["top"] != nil {
		want["top"], want["freq"] = top, strconv.Itoa(int(pandas["freq"].(float64)))
	}
	for k, v := range want {
		if fmt.Sprint(ours[k]) != fmt.Sprint(v) {
			t.Errorf("%s.%s: ours %v, pandas %v", field, k, ours[k], v)
		}
	}
}

// generatedFields are the fields of record R of the generated KM "g".
var generatedFields = []struct{ id, typ string }{
	{"ID", "integer"}, {"I", "integer"}, {"F", "float"}, {"BIG", "float"}, {"TINY", "float"},
	{"S", "string"}, {"D", "date"}, {"DT", "datetime"}, {"B", "boolean"},
}

// writeGeneratedKM writes models/g.yaml and data/r.csv of n seeded random rows to dir.
func writeGeneratedKM(t *testing.T, dir string, n int) {
	t.Helper()
	var model strings.Builder
	model.WriteString("id: g\nname: Generated\nrecords:\n  - id: R\n    source: r\n    fields:\n")
	for _, f := range generatedFields {
		fmt.Fprintf(&model, "      - {id: %s, type: %s}\n", f.id, f.typ)
	}
	for _, sub := range []string{"models", "data"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "models", "g.yaml"), []byte(model.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 11))
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	header := make([]string, len(generatedFields))
	for i, f := range generatedFields {
		header[i] = f.id
	}
	_ = cw.Write(header)
	null := func(p float64) bool { return rng.Float64() < p }
	float := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	for i := range n {
		row := make([]string, len(generatedFields))
		row[0] = strconv.Itoa(i)
		if !null(0.2) {
			row[1] = strconv.Itoa(rng.IntN(200) - 100)
		}
		if !null(0.1) {
			row[2] = float(math.Round(rng.NormFloat64()*1e4) / 64)
		}
		if !null(0.05) {
			row[3] = float(rng.NormFloat64() * 1e17)
		}
		if !null(0.05) {
			row[4] = float(rng.Float64() * 1e-300)
		}
		if !null(0.1) {
			row[5] = "v" + strconv.Itoa(rng.IntN(6))
		}
		if !null(0.1) {
			row[6] = time.Date(2022, 1, 1+rng.IntN(20), 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		}
		if !null(0.1) {
			row[7] = time.Unix(1_700_000_000+int64(rng.IntN(40)), 0).UTC().Format(time.RFC3339)
		}
		if !null(0.3) {
			row[8] = strconv.FormatBool(rng.IntN(3) == 0)
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	if err := os.WriteFile(filepath.Join(dir, "data", "r.csv"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
