package bench

import (
	"io/fs"
	"testing"
)

// cgroupCPULimit reads the quota of the process's own cgroup or, when
// less, of an ancestor's, on cgroup v1 and v2, through a mount whose root
// is a cgroup itself (a container's namespace); no quota, no cgroup file
// system or files it cannot read are no limit.
func TestCgroupCPULimit(t *testing.T) {
	const (
		v1Cgroup = "12:memory:/x\n4:cpu,cpuacct:/bench/driver\n0::/\n"
		v1Mounts = "30 25 0:26 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n" +
			"31 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n" +
			"32 25 0:28 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n"
		v2Cgroup = "0::/user.slice/bench\n"
		v2Mounts = "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
	)
	v1 := "/sys/fs/cgroup/cpu,cpuacct"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  float64 // 0: no limit
	}{
		{"v1 own quota", map[string]string{
			"/proc/self/cgroup": v1Cgroup, "/proc/self/mountinfo": v1Mounts,
			v1 + "/bench/driver/cpu.cfs_quota_us": "20000\n", v1 + "/bench/driver/cpu.cfs_period_us": "100000\n",
			v1 + "/bench/cpu.cfs_quota_us": "-1\n", v1 + "/bench/cpu.cfs_period_us": "100000\n",
			v1 + "/cpu.cfs_quota_us": "-1\n", v1 + "/cpu.cfs_period_us": "100000\n",
		}, 0.2},
		{"v1 an ancestor's quota is less", map[string]string{
			"/proc/self/cgroup": v1Cgroup, "/proc/self/mountinfo": v1Mounts,
			v1 + "/bench/driver/cpu.cfs_quota_us": "150000\n", v1 + "/bench/driver/cpu.cfs_period_us": "100000\n",
			v1 + "/bench/cpu.cfs_quota_us": "50000\n", v1 + "/bench/cpu.cfs_period_us": "50000\n",
		}, 1},
		{"v1 no quota", map[string]string{
			"/proc/self/cgroup": v1Cgroup, "/proc/self/mountinfo": v1Mounts,
			v1 + "/bench/driver/cpu.cfs_quota_us": "-1\n", v1 + "/bench/driver/cpu.cfs_period_us": "100000\n",
		}, 0},
		{"v1 mount rooted at the container's cgroup", map[string]string{
			"/proc/self/cgroup":                   "3:cpu:/pod/ctr\n",
			"/proc/self/mountinfo":                "40 30 0:27 /pod/ctr /sys/fs/cgroup/cpu ro - cgroup cgroup rw,cpu\n",
			"/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "300000", "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000",
		}, 3},
		{"v2 own quota", map[string]string{
			"/proc/self/cgroup": v2Cgroup, "/proc/self/mountinfo": v2Mounts,
			"/sys/fs/cgroup/user.slice/bench/cpu.max": "25000 100000\n",
			"/sys/fs/cgroup/user.slice/cpu.max":       "max 100000\n",
		}, 0.25},
		{"v2 no quota", map[string]string{
			"/proc/self/cgroup": v2Cgroup, "/proc/self/mountinfo": v2Mounts,
			"/sys/fs/cgroup/user.slice/bench/cpu.max": "max 100000\n",
		}, 0},
		{"hybrid: the cpu controller on v1 wins over v2's cpu.max", map[string]string{
			"/proc/self/cgroup": v1Cgroup, "/proc/self/mountinfo": v1Mounts,
			"/sys/fs/cgroup/unified/cpu.max": "10000 100000\n",
		}, 0},
		{"no cgroup file system", map[string]string{
			"/proc/self/cgroup": v1Cgroup, "/proc/self/mountinfo": "20 1 8:1 / / rw - ext4 /dev/sda1 rw\n",
		}, 0},
		{"no /proc", map[string]string{}, 0},
		{"a malformed quota", map[string]string{
			"/proc/self/cgroup": v2Cgroup, "/proc/self/mountinfo": v2Mounts,
			"/sys/fs/cgroup/user.slice/bench/cpu.max": "lots\n",
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			read := func(p string) ([]byte, error) {
				if s, ok := c.files[p]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			got, ok := cgroupCPULimit(read)
			if ok != (c.want > 0) || got != c.want {
				t.Errorf("limit %g (%v), want %g", got, ok, c.want)
			}
		})
	}
}
