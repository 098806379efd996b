/* Preload for a user-mode Linux kernel: its XSAVE area handed to a host whose own is larger */
/*
 * A user-mode Linux kernel keeps each guest task's FP and vector registers in a
 * buffer sized for the XSAVE components it was built to know (AVX-512 at most:
 * 2696 bytes for Debian's 5.10 and 6.1) and moves them with
 * PTRACE_GETREGSET/PTRACE_SETREGSET(NT_X86_XSTATE). The host kernel returns a
 * shorter read without complaint but takes a write only when it holds the
 * host's whole XSAVE area, so on a host with larger components enabled (AMX
 * tiles: 11008 bytes) every write fails with EFAULT and the guest panics at its
 * first process ("ptrace set fp regs failed, errno = 14"). Kernels from 6.13 size
 * the buffer from the host; for the older ones this preload widens each write
 * to the host's size, the components the guest cannot hold in their initial
 * state, and refuses a read that would drop live state of such a component.
 *
 * A process uses AMX only after asking the kernel for it (arch_prctl
 * ARCH_REQ_XCOMP_PERM), which nothing in the guests does; the read check makes
 * that assumption fail loudly rather than corrupt a register.
 *
 * UML calls ptrace from its one kernel thread only, so the scratch buffer and
 * the cached sizes need no lock.
 */
#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The XSAVE header's first word: which components the area holds. */
#define XSTATE_BV_OFFSET 512
#define XSTATE_HEADER_END 576

typedef long (*ptrace_fn)(enum __ptrace_request, pid_t, void *, void *);

static unsigned char scratch[1 << 16];
static size_t host_size;

/* The user components (bit i of XCR0) that do not fit wholly in LEN bytes. */
static uint64_t xstate_beyond(size_t len)
{
	static size_t cached_len;
	static uint64_t cached_mask;
	unsigned int a, b, c, d;
	uint64_t mask = 0;

	if (len == cached_len)
		return cached_mask;
	for (unsigned int i = 2; i < 63; i++) {
		__cpuid_count(0xd, i, a, b, c, d);
		/* ECX bit 0: a supervisor component, never in a ptrace area. */
		if (a != 0 && !(c & 1) && (size_t)b + a > len)
			mask |= UINT64_C(1) << i;
	}
	cached_len = len;
	cached_mask = mask;
	return mask;
}

static uint64_t xstate_bv(const void *area)
{
	uint64_t bv;

	memcpy(&bv, (const unsigned char *)area + XSTATE_BV_OFFSET, sizeof(bv));
	return bv;
}

static long xstate_get(ptrace_fn real, pid_t pid, void *addr, struct iovec *iov)
{
	long r = real(PTRACE_GETREGSET, pid, addr, iov);
	uint64_t dropped;

	if (r < 0 || iov->iov_len < XSTATE_HEADER_END)
		return r;
	dropped = xstate_bv(iov->iov_base) & xstate_beyond(iov->iov_len);
	if (dropped) {
		fprintf(stderr, "uml-xstate: pid %d holds XSAVE components 0x%llx beyond the guest's "
			"%zu-byte area: refusing to drop them\n", (int)pid,
			(unsigned long long)dropped, iov->iov_len);
		errno = EIO;
		return -1;
	}
	return r;
}

static long xstate_set(ptrace_fn real, pid_t pid, void *addr, struct iovec *iov)
{
	struct iovec wide = { scratch, sizeof(scratch) };
	uint64_t bv;
	long r;

	if (host_size == 0) {
		r = real(PTRACE_SETREGSET, pid, addr, iov);
		if (r == 0 || errno != EFAULT)
			return r;
		/* A read into a large enough buffer returns the host's whole size. */
		if (real(PTRACE_GETREGSET, pid, addr, &wide) < 0) {
			errno = EFAULT;
			return -1;
		}
		host_size = wide.iov_len;
	}
	if (iov->iov_len >= host_size || iov->iov_len < XSTATE_HEADER_END)
		return real(PTRACE_SETREGSET, pid, addr, iov);
	memset(scratch, 0, host_size);
	memcpy(scratch, iov->iov_base, iov->iov_len);
	bv = xstate_bv(scratch) & ~xstate_beyond(iov->iov_len);
	memcpy(scratch + XSTATE_BV_OFFSET, &bv, sizeof(bv));
	wide.iov_len = host_size;
	return real(PTRACE_SETREGSET, pid, addr, &wide);
}

long ptrace(enum __ptrace_request request, ...)
{
	static ptrace_fn real;
	va_list ap;
	pid_t pid;
	void *addr, *data;

	va_start(ap, request);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);
	if (!real) {
		/* ISO C has no cast from dlsym's object pointer to a function pointer. */
		void *sym = dlsym(RTLD_NEXT, "ptrace");

		memcpy(&real, &sym, sizeof(real));
	}
	if ((uintptr_t)addr == NT_X86_XSTATE && request == PTRACE_GETREGSET)
		return xstate_get(real, pid, addr, data);
	if ((uintptr_t)addr == NT_X86_XSTATE && request == PTRACE_SETREGSET)
		return xstate_set(real, pid, addr, data);
	return real(request, pid, addr, data);
}
