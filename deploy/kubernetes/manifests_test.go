// Package kubernetes_test checks the manifests of this directory without a
// cluster: each is decoded strictly into the Kubernetes API type of its kind,
// and what matters to a freshbench experiment is checked against the real
// command line.
package kubernetes_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/redact"
)

// decoder decodes YAML into the API type that its apiVersion and kind name.
// Strict: an unknown field, a field spelt in another case and a duplicate
// field are errors, as the API server's strict field validation
// (kubectl apply --validate=strict) makes them.
func decoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Yaml: true, Strict: true})
}

// decodeAll decodes every document of a YAML stream.
func decodeAll(dec runtime.Decoder, data []byte) ([]runtime.Object, error) {
	r := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		objs = append(objs, obj)
	}
}

// manifests are the decoded objects of this directory, by file name.
func manifests(t *testing.T) map[string][]runtime.Object {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests here (%v)", err)
	}
	dec := decoder(t)
	out := map[string][]runtime.Object{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeAll(dec, data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(objs) == 0 {
			t.Fatalf("%s: no Kubernetes object", f)
		}
		out[f] = objs
	}
	return out
}

// only returns the one object of type T in file.
func only[T runtime.Object](t *testing.T, m map[string][]runtime.Object, file string) T {
	t.Helper()
	var found []T
	for _, o := range m[file] {
		if v, ok := o.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%s: want one %T, found %d", file, zero, len(found))
	}
	return found[0]
}

func TestManifestsDecodeStrictly(t *testing.T) {
	m := manifests(t)
	for _, f := range []string{"freshbench-job.yaml", "merge-job.yaml", "results-pvc.yaml", "results-reader.yaml"} {
		if len(m[f]) == 0 {
			t.Errorf("%s: missing", f)
		}
	}
}

// A manifest the API server would refuse, or would accept while dropping
// what it did not know, fails the test.
func TestBrokenManifestsAreRefused(t *testing.T) {
	orig, err := os.ReadFile("freshbench-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"unknown field", "\n  parallelism:", "\n  paralelism:", `unknown field "spec.paralelism"`},
		{"field in another case", "\n  completionMode:", "\n  completionmode:", `unknown field "spec.completionmode"`},
		{"duplicate field", "\n  completions:", "\n  completions: 1\n  completions:", `"completions" already set`},
		{"field at the wrong level", "\n      restartPolicy:", "\n      backoffLimitPerIndex: 0\n      restartPolicy:", `unknown field "spec.template.spec.backoffLimitPerIndex"`},
		{"unknown kind", "\nkind: Job\n", "\nkind: Jobs\n", `no kind "Jobs"`},
		{"wrong type", "\n  completions: ", "\n  completions: four # ", "cannot unmarshal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			broken := strings.Replace(string(orig), c.old, c.new, 1)
			if broken == string(orig) {
				t.Fatalf("freshbench-job.yaml has no %q to break", c.old)
			}
			_, err := decodeAll(decoder(t), []byte(broken))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("decoded with %s: error %v, want one with %s", c.name, err, c.want)
			}
		})
	}
}

// flagValue returns the value of --name=value in args, and whether it is
// there exactly once.
func flagValue(args []string, name string) (string, bool) {
	var vals []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) != 1 {
		return "", false
	}
	return vals[0], true
}

// mustFlag is flagValue for a flag the manifest must give.
func mustFlag(t *testing.T, args []string, name string) string {
	t.Helper()
	v, ok := flagValue(args, name)
	if !ok {
		t.Fatalf("args %q: want --%s=VALUE exactly once", args, name)
	}
	return v
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces the $(VAR) references of args as the kubelet does,
// failing on a reference to a variable the container does not declare
// (the kubelet would pass it on as written).
func expand(t *testing.T, args []string, vals map[string]string) []string {
	t.Helper()
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = varRef.ReplaceAllStringFunc(a, func(ref string) string {
			name := varRef.FindStringSubmatch(ref)[1]
			v, ok := vals[name]
			if !ok {
				t.Fatalf("argument %q refers to $(%s), which is not set here", a, name)
			}
			return v
		})
	}
	return out
}

// envRef returns the name of the variable that v refers to, which must be
// all that v is.
func envRef(t *testing.T, v string) string {
	t.Helper()
	m := varRef.FindStringSubmatch(v)
	if m == nil || m[0] != v {
		t.Fatalf("%q: want a reference $(VAR) to a variable of the container", v)
	}
	return m[1]
}

// container is the one container of pod.
func container(t *testing.T, pod corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	return pod.Containers[0]
}

// instances is the --instances value of args.
func instances(t *testing.T, args []string) int {
	t.Helper()
	n, err := strconv.Atoi(mustFlag(t, args, "instances"))
	if err != nil || n < 1 {
		t.Fatalf("--instances: want a count of 1 or more (%v)", err)
	}
	return n
}

func envVar(t *testing.T, c corev1.Container, name string) corev1.EnvVar {
	t.Helper()
	for _, e := range c.Env {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("container %s declares no variable %s", c.Name, name)
	return corev1.EnvVar{}
}

// resultsDir is where the claim of results-pvc.yaml is mounted in pod.
func resultsDir(t *testing.T, pod corev1.PodSpec, c corev1.Container, claim string) string {
	t.Helper()
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claim {
			continue
		}
		for _, vm := range c.VolumeMounts {
			if vm.Name == v.Name {
				return vm.MountPath
			}
		}
	}
	t.Fatalf("container %s mounts no volume of claim %s", c.Name, claim)
	return ""
}

func TestInstanceJob(t *testing.T) {
	m := manifests(t)
	pvc := only[*corev1.PersistentVolumeClaim](t, m, "results-pvc.yaml")
	job := only[*batchv1.Job](t, m, "freshbench-job.yaml")
	spec := job.Spec
	pod := spec.Template.Spec
	c := container(t, pod)
	args := c.Args
	n := instances(t, args)

	t.Run("one pod per instance, all at once, none retried", func(t *testing.T) {
		if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
			t.Errorf("completionMode %v, want Indexed", spec.CompletionMode)
		}
		if comp, par := deref(spec.Completions), deref(spec.Parallelism); comp != n || par != n {
			t.Errorf("completions %d, parallelism %d: want both equal to --instances=%d", comp, par, n)
		}
		if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex != 0 {
			t.Errorf("backoffLimitPerIndex %v, want 0: a retried instance starts after --start-at and is refused", spec.BackoffLimitPerIndex)
		}
		if pod.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("restartPolicy %q, want Never", pod.RestartPolicy)
		}
		if len(args) == 0 || args[0] != "run" {
			t.Errorf("args %q: want the run command first", args)
		}
	})

	t.Run("instance index from the completion index", func(t *testing.T) {
		idx := envRef(t, mustFlag(t, args, "instance"))
		e := envVar(t, c, idx)
		want := fmt.Sprintf("metadata.annotations['%s']", batchv1.JobCompletionIndexAnnotation)
		if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != want {
			t.Errorf("%s: want it from the field %s", idx, want)
		}
		out := mustFlag(t, args, "out")
		if !strings.Contains(out, "$("+idx+")") {
			t.Errorf("--out=%s: want the instance index in the name, or the instances overwrite each other", out)
		}
		dir := resultsDir(t, pod, c, pvc.Name)
		if !strings.HasPrefix(out, dir+"/") {
			t.Errorf("--out=%s: want it on the results volume, mounted at %s", out, dir)
		}
		if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
			t.Errorf("claim %s: access modes %v, want ReadWriteMany: the instances run on several nodes", pvc.Name, pvc.Spec.AccessModes)
		}
	})

	t.Run("one start and one name for every instance", func(t *testing.T) {
		for _, f := range []string{"start-at", "experiment"} {
			e := envVar(t, c, envRef(t, mustFlag(t, args, f)))
			if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil {
				t.Errorf("--%s: want it from a ConfigMap, set once for every pod", f)
			}
		}
	})

	t.Run("target and credentials from a Secret only", func(t *testing.T) {
		e := envVar(t, c, envRef(t, mustFlag(t, args, "target")))
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("--target: want it from a Secret")
		}
		if !slices.ContainsFunc(c.EnvFrom, func(s corev1.EnvFromSource) bool { return s.SecretRef != nil }) {
			t.Errorf("envFrom: want the credential variables from a Secret")
		}
		for _, e := range c.Env {
			if slices.Contains(redact.CredentialVars(), e.Name) && e.ValueFrom == nil {
				t.Errorf("%s is written in the manifest; want it from the Secret", e.Name)
			}
		}
		none := func(string) string { return "" }
		if s := redact.Secrets(none, args...); len(s) > 0 {
			t.Errorf("args hold %d credentials", len(s))
		}
	})

	t.Run("metrics reachable by Prometheus", func(t *testing.T) {
		addr := mustFlag(t, args, "metrics-addr")
		host, port, _ := strings.Cut(addr, ":")
		if host != "0.0.0.0" {
			t.Errorf("--metrics-addr=%s: want 0.0.0.0, or Prometheus cannot scrape the pod's IP", addr)
		}
		if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return strconv.Itoa(int(p.ContainerPort)) == port }) {
			t.Errorf("--metrics-addr=%s: no containerPort %s", addr, port)
		}
		ann := spec.Template.Annotations
		if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != port {
			t.Errorf("annotations %v: want prometheus.io/scrape true and prometheus.io/port %s", ann, port)
		}
	})

	t.Run("the real command line takes the arguments", func(t *testing.T) {
		// Every variable as the pod would see it, but for the index: one
		// past the last, which freshbench refuses after it has parsed and
		// checked every other flag, before it contacts the target.
		vals := map[string]string{}
		for _, e := range c.Env {
			vals[e.Name] = "x"
		}
		vals[envRef(t, mustFlag(t, args, "instance"))] = strconv.Itoa(n)
		vals[envRef(t, mustFlag(t, args, "start-at"))] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		vals[envRef(t, mustFlag(t, args, "target"))] = "sim://"
		code, stderr := freshbench(t, expand(t, args, vals)...)
		want := fmt.Sprintf("--instance %d: want 0..%d", n, n-1)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Fatalf("freshbench with the manifest's args: exit %d, %q; want exit 2 and %q", code, stderr, want)
		}
	})
}

func TestMergeJob(t *testing.T) {
	m := manifests(t)
	pvc := only[*corev1.PersistentVolumeClaim](t, m, "results-pvc.yaml")
	inst := only[*batchv1.Job](t, m, "freshbench-job.yaml")
	merge := only[*batchv1.Job](t, m, "merge-job.yaml")
	ic, mc := container(t, inst.Spec.Template.Spec), container(t, merge.Spec.Template.Spec)
	if ic.Image != mc.Image {
		t.Errorf("merge image %s, instances' %s: want one image", mc.Image, ic.Image)
	}
	if d, e := resultsDir(t, inst.Spec.Template.Spec, ic, pvc.Name), resultsDir(t, merge.Spec.Template.Spec, mc, pvc.Name); d != e {
		t.Errorf("results volume at %s for the instances, at %s for the merge", d, e)
	}
	// Both read the experiment's name from the same key.
	iName := envVar(t, ic, envRef(t, mustFlag(t, ic.Args, "experiment")))
	for _, a := range mc.Args {
		for _, ref := range varRef.FindAllStringSubmatch(a, -1) {
			if e := envVar(t, mc, ref[1]); !equalSource(e, iName) {
				t.Errorf("merge's $(%s) is not from where the instances' --experiment is", ref[1])
			}
		}
	}

	// The files merged are exactly those the instances write.
	n := instances(t, ic.Args)
	vals := map[string]string{}
	for _, e := range slices.Concat(ic.Env, mc.Env) {
		vals[e.Name] = "NAME"
	}
	vals[envRef(t, mustFlag(t, ic.Args, "instance"))] = "{i}"
	out := expand(t, []string{mustFlag(t, ic.Args, "out")}, vals)[0]
	var want []string
	for i := range n {
		want = append(want, strings.ReplaceAll(out, "{i}", strconv.Itoa(i)))
	}
	args := expand(t, mc.Args, vals)
	if len(args) == 0 || args[0] != "merge" {
		t.Fatalf("args %q: want the merge command first", mc.Args)
	}
	var files []string
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			files = append(files, a)
		}
	}
	if !slices.Equal(files, want) {
		t.Errorf("merge reads %q; the instances write %q", files, want)
	}
	mergedOut := mustFlag(t, args, "out")
	if slices.Contains(want, mergedOut) || filepath.Dir(mergedOut) != filepath.Dir(want[0]) {
		t.Errorf("--out=%s: want a file of its own beside the instances' results", mergedOut)
	}
	// The real command line takes the arguments: with no volume here, it
	// gets as far as reading the first instance's file.
	code, stderr := freshbench(t, slices.Concat([]string{args[0], "--out", filepath.Join(t.TempDir(), "merged.json")}, files)...)
	if code != 2 || !strings.Contains(stderr, want[0]) {
		t.Errorf("freshbench with the merge Job's files: exit %d, %q; want exit 2 naming the missing %s", code, stderr, want[0])
	}
}

// deref is *p, or -1 for a field left out.
func deref(p *int32) int {
	if p == nil {
		return -1
	}
	return int(*p)
}

// equalSource tells whether a and b are the same key of one ConfigMap.
func equalSource(a, b corev1.EnvVar) bool {
	ra, rb := a.ValueFrom, b.ValueFrom
	return ra != nil && rb != nil && ra.ConfigMapKeyRef != nil && rb.ConfigMapKeyRef != nil &&
		ra.ConfigMapKeyRef.Name == rb.ConfigMapKeyRef.Name && ra.ConfigMapKeyRef.Key == rb.ConfigMapKeyRef.Key
}

func TestResultsReader(t *testing.T) {
	m := manifests(t)
	pvc := only[*corev1.PersistentVolumeClaim](t, m, "results-pvc.yaml")
	pod := only[*corev1.Pod](t, m, "results-reader.yaml")
	resultsDir(t, pod.Spec, container(t, pod.Spec), pvc.Name)
}

// build builds the freshbench command of this repository, once, when the
// first test needs it.
var build = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return testenv.BuildFreshbench(ctx)
})

// freshbench runs the freshbench command built from this repository and
// returns its exit code and standard error.
func freshbench(t *testing.T, args ...string) (int, string) {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stderr.String()
	default:
		t.Fatalf("run freshbench: %v", err)
		return 0, ""
	}
}
