package bench

import (
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
)

// driverCores is how many cores the driver may use: GOMAXPROCS, or the
// CPU quota of its cgroup when that is less (quota says so). The Go
// runtime sets GOMAXPROCS from the quota, but never below 2, so a driver
// capped at a fraction of a core would otherwise look idle.
func driverCores() (cores float64, quota bool) {
	cores = float64(runtime.GOMAXPROCS(0))
	if limit, ok := cgroupCPULimit(os.ReadFile); ok && limit < cores {
		return limit, true
	}
	return cores, false
}

// cgroupCPULimit is the CPU bandwidth limit (cores) of this process's
// cgroup and its ancestors, the least of them: cpu.cfs_quota_us over
// cpu.cfs_period_us on cgroup v1, cpu.max on v2; ok is false when there
// is none or no cgroup file system is mounted. read reads a file (tests
// give their own).
func cgroupCPULimit(read func(string) ([]byte, error)) (limit float64, ok bool) {
	cg, err := read("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	mi, err := read("/proc/self/mountinfo")
	if err != nil {
		return 0, false
	}
	var v1, v2 string // the process's cgroup in each hierarchy
	hasV1, hasV2 := false, false
	for line := range strings.Lines(string(cg)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2, hasV2 = f[2], true
		case hasController(f[1], "cpu"):
			v1, hasV1 = f[2], true
		}
	}
	for line := range strings.Lines(string(mi)) {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, found := strings.Cut(strings.TrimSpace(line), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !found || len(f) < 5 || len(g) < 3 {
			continue
		}
		root, mount := unescapeMount(f[3]), unescapeMount(f[4])
		var dir string
		var limitAt func(string) (float64, bool)
		switch {
		case g[0] == "cgroup" && hasV1 && hasController(g[2], "cpu"):
			dir, limitAt = v1, func(d string) (float64, bool) { return quotaV1(read, d) }
		case g[0] == "cgroup2" && hasV2 && !hasV1:
			dir, limitAt = v2, func(d string) (float64, bool) { return quotaV2(read, d) }
		default:
			continue
		}
		rel, under := cutRoot(dir, root)
		if !under {
			continue
		}
		// A quota on an ancestor limits its children too.
		for {
			if l, has := limitAt(path.Join(mount, rel)); has && (!ok || l < limit) {
				limit, ok = l, true
			}
			if rel == "/" || rel == "." || rel == "" {
				break
			}
			rel = path.Dir(rel)
		}
		return limit, ok
	}
	return 0, false
}

// hasController says whether the comma-separated list names c.
func hasController(list, c string) bool {
	for o := range strings.SplitSeq(list, ",") {
		if o == c {
			return true
		}
	}
	return false
}

// cutRoot is dir relative to a mount whose root is root: the path
// under the mount point, and whether dir is under it at all.
func cutRoot(dir, root string) (string, bool) {
	if root == "/" {
		return dir, true
	}
	if dir == root {
		return "/", true
	}
	if rest, ok := strings.CutPrefix(dir, root+"/"); ok {
		return "/" + rest, true
	}
	return "", false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// quotaV1 is the cgroup v1 limit in dir: cpu.cfs_quota_us over
// cpu.cfs_period_us; none when the quota is -1.
func quotaV1(read func(string) ([]byte, error), dir string) (float64, bool) {
	q, err1 := read(path.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := read(path.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return ratio(strings.TrimSpace(string(q)), strings.TrimSpace(string(p)))
}

// quotaV2 is the cgroup v2 limit in dir: cpu.max is "quota period", the
// quota "max" when there is none.
func quotaV2(read func(string) ([]byte, error), dir string) (float64, bool) {
	b, err := read(path.Join(dir, "cpu.max"))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	return ratio(f[0], f[1])
}

func ratio(quota, period string) (float64, bool) {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return q / p, true
}
