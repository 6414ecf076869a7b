// bind.c: an LD_PRELOAD library that binds a socket asked for the
// wildcard address (0.0.0.0, ::) to loopback instead. Pinot 0.11's
// server binds its Netty query port on every interface and has no
// setting for the address, while every server freshbench starts listens
// on 127.0.0.1 only. Written by hand: no packaged library does this.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
	static bind_fn real_bind;
	if (!real_bind) {
		real_bind = (bind_fn)dlsym(RTLD_NEXT, "bind");
	}
	if (addr && addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in in;
		memcpy(&in, addr, sizeof in);
		if (in.sin_addr.s_addr == htonl(INADDR_ANY)) {
			in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			return real_bind(fd, (const struct sockaddr *)&in, sizeof in);
		}
	} else if (addr && addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 in6;
		memcpy(&in6, addr, sizeof in6);
		if (IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr)) {
			// ::ffff:127.0.0.1: a dual-stack socket, as Java opens, then
			// takes connections to 127.0.0.1 and no others.
			memset(&in6.sin6_addr, 0, sizeof in6.sin6_addr);
			in6.sin6_addr.s6_addr[10] = 0xff;
			in6.sin6_addr.s6_addr[11] = 0xff;
			in6.sin6_addr.s6_addr[12] = 127;
			in6.sin6_addr.s6_addr[15] = 1;
			return real_bind(fd, (const struct sockaddr *)&in6, sizeof in6);
		}
	}
	return real_bind(fd, addr, len);
}
