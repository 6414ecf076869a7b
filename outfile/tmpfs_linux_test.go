package outfile

import "syscall"

// mountSmall mounts a tmpfs of 4 KiB at dir, too small for a results
// file; unmount undoes it.
func mountSmall(dir string) (unmount func(), err error) {
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4k"); err != nil {
		return nil, err
	}
	return func() { syscall.Unmount(dir, 0) }, nil
}
