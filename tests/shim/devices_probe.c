/* devices_probe: the edges of /dev/cpu/<n>/msr and /dev/ipmi0 that the tools do not reach, each
 * as the kernel answers it (arch/x86/kernel/msr.c; drivers/char/ipmi/ipmi_devintf.c and
 * ipmi_msghandler.c; include/uapi/linux/ipmi.h). Run under `hwemu exec` on a bare-metal Intel
 * node (`msr-only`: the MSR part, for the seccomp route); prints one line per check, "ok ..." or "FAIL ...", and exits 1 on any failure. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/ipmi.h>

static int failed;

static void check(int cond, const char *what)
{
    printf("%s %s\n", cond ? "ok" : "FAIL", what);
    if (!cond)
        failed = 1;
}

static void msr(void)
{
    int fd = open("/dev/cpu/0/msr", O_RDONLY);
    check(fd >= 0, "open /dev/cpu/0/msr");
    uint64_t v[2] = {0, 0}, w = 0;
    errno = 0;
    check(pread(fd, v, 4, 0x606) < 0 && errno == EINVAL, "a 4-byte read is EINVAL");
    check(pread(fd, v, 0, 0x606) == 0, "a 0-byte read is 0");
    check(pread(fd, v, 16, 0x606) == 16 && v[0] == v[1] && v[0] == 0xA0E03, "16 bytes read the register twice");
    errno = 0;
    check(pread(fd, v, 8, 0x1234) < 0 && errno == EIO, "an absent register is EIO");
    check(lseek(fd, 0x606, SEEK_SET) == 0x606, "lseek to the MSR");
    check(read(fd, &w, 8) == 8 && w == 0xA0E03 && read(fd, &w, 8) == 8 && w == 0xA0E03, "read at the position");
    check(lseek(fd, 0, SEEK_CUR) == 0x606, "read does not move the position");
    errno = 0;
    check(lseek(fd, 0, SEEK_END) < 0 && errno == EINVAL, "SEEK_END is EINVAL");
    errno = 0;
    check(write(fd, &w, 8) < 0 && errno == EBADF, "write on a read-only descriptor is EBADF");
    close(fd);
    struct stat st;
    check(stat("/dev/cpu/7/msr", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 202 &&
              minor(st.st_rdev) == 7 && (st.st_mode & 0777) == 0600 && st.st_uid == 0,
          "stat: c 202:7 0600 root");
    errno = 0;
    check(open("/dev/cpu/100000/msr", O_RDONLY) < 0 && errno == ENOENT, "a CPU the node lacks is ENOENT");
}

static int send_req(int fd, long msgid, unsigned char netfn, unsigned char cmd, unsigned char *data, unsigned short len,
                    short channel)
{
    struct ipmi_system_interface_addr a = {IPMI_SYSTEM_INTERFACE_ADDR_TYPE, channel, 0};
    struct ipmi_req r = {(unsigned char *)&a, sizeof a, msgid, {netfn, cmd, len, data}};
    return ioctl(fd, IPMICTL_SEND_COMMAND, &r);
}

static int recv_msg(int fd, unsigned long req, unsigned char *buf, unsigned short cap, struct ipmi_recv *rv,
                    struct ipmi_addr *addr)
{
    memset(rv, 0, sizeof *rv);
    rv->addr = (unsigned char *)addr;
    rv->addr_len = sizeof *addr;
    rv->msg.data = buf;
    rv->msg.data_len = cap;
    return ioctl(fd, req, rv);
}

static int readable(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void ipmi(void)
{
    int fd = open("/dev/ipmi0", O_RDWR);
    check(fd >= 0 && fd < 1024, "open /dev/ipmi0: a real descriptor under FD_SETSIZE");
    struct stat st;
    check(stat("/dev/ipmi0", &st) == 0 && S_ISCHR(st.st_mode) && (st.st_mode & 0777) == 0600, "stat: c 0600");
    unsigned char buf[64];
    struct ipmi_recv rv;
    struct ipmi_addr addr;
    errno = 0;
    check(recv_msg(fd, IPMICTL_RECEIVE_MSG_TRUNC, buf, sizeof buf, &rv, &addr) < 0 && errno == EAGAIN,
          "receive with nothing queued is EAGAIN");
    check(!readable(fd), "not readable while empty");
    unsigned addr20 = 0x20, got = 0;
    check(ioctl(fd, IPMICTL_SET_MY_ADDRESS_CMD, &addr20) == 0 && ioctl(fd, IPMICTL_GET_MY_ADDRESS_CMD, &got) == 0 &&
              got == 0x20, "SET/GET_MY_ADDRESS");
    errno = 0;
    check(send_req(fd, 1, 0x06, 0x01, NULL, 0, 0x02) < 0 && errno == EINVAL, "a channel other than the BMC's: EINVAL");
    errno = 0;
    check(send_req(fd, 1, 0x07, 0x01, NULL, 0, IPMI_BMC_CHANNEL) < 0 && errno == EINVAL, "a response netfn: EINVAL");
    errno = 0;
    check(ioctl(fd, _IOR('i', 99, int), &got) < 0 && errno == ENOTTY, "an unknown ioctl: ENOTTY");
    /* ipmi_devintf.c copies every argument with copy_from_user/copy_to_user, even those it
     * ignores: NULL is EFAULT (GET_MAINTENANCE_MODE takes none and answers its mode, 0) */
    errno = 0;
    check(ioctl(fd, IPMICTL_SET_TIMING_PARMS_CMD, NULL) < 0 && errno == EFAULT &&
              ioctl(fd, IPMICTL_GET_MAINTENANCE_MODE_CMD, NULL) == 0,
          "NULL argument: EFAULT, except GET_MAINTENANCE_MODE");
    /* Get Device ID */
    check(send_req(fd, 77, 0x06, 0x01, NULL, 0, IPMI_BMC_CHANNEL) == 0 && readable(fd), "send: readable after");
    errno = 0;
    check(recv_msg(fd, IPMICTL_RECEIVE_MSG, buf, 4, &rv, &addr) < 0 && errno == EMSGSIZE && readable(fd),
          "RECEIVE_MSG into a small buffer: EMSGSIZE, message kept");
    check(recv_msg(fd, IPMICTL_RECEIVE_MSG, buf, sizeof buf, &rv, &addr) == 0 && rv.msgid == 77 &&
              rv.recv_type == IPMI_RESPONSE_RECV_TYPE && rv.msg.netfn == 0x07 && rv.msg.cmd == 0x01 &&
              rv.msg.data_len == 12 && buf[0] == 0 && buf[1] == 0x20 && buf[5] == 0x02 &&
              addr.addr_type == IPMI_SYSTEM_INTERFACE_ADDR_TYPE && !readable(fd),
          "Get Device ID: msgid, netfn + 1, cc 0, device 0x20, IPMI 2.0; empty after");
    /* DCMI Get Power Reading, truncated */
    unsigned char dcmi[4] = {0xDC, 0x01, 0x00, 0x00};
    check(send_req(fd, 78, 0x2C, 0x02, dcmi, 4, IPMI_BMC_CHANNEL) == 0, "send Get Power Reading");
    errno = 0;
    check(recv_msg(fd, IPMICTL_RECEIVE_MSG_TRUNC, buf, 10, &rv, &addr) < 0 && errno == EMSGSIZE &&
              rv.msg.data_len == 10 && !readable(fd), "TRUNC into 10 bytes: EMSGSIZE, truncated and taken");
    check(send_req(fd, 79, 0x2C, 0x02, dcmi, 4, IPMI_BMC_CHANNEL) == 0 &&
              recv_msg(fd, IPMICTL_RECEIVE_MSG_TRUNC, buf, sizeof buf, &rv, &addr) == 0 && rv.msg.data_len == 19 &&
              buf[0] == 0 && buf[1] == 0xDC && (buf[2] | buf[3] << 8) > 0 && buf[18] == 0x40,
          "Get Power Reading: 19 bytes, cc 0, 0xDC, power > 0, measurement active");
    printf("power %u W\n", buf[2] | buf[3] << 8);
    /* Get Power Limit: no limit set; PICMG: invalid command */
    unsigned char dc[3] = {0xDC, 0, 0};
    check(send_req(fd, 80, 0x2C, 0x03, dc, 3, IPMI_BMC_CHANNEL) == 0 &&
              recv_msg(fd, IPMICTL_RECEIVE_MSG_TRUNC, buf, sizeof buf, &rv, &addr) == 0 && buf[0] == 0x80,
          "Get Power Limit: cc 0x80");
    unsigned char pic[1] = {0};
    check(send_req(fd, 81, 0x2C, 0x00, pic, 1, IPMI_BMC_CHANNEL) == 0 &&
              recv_msg(fd, IPMICTL_RECEIVE_MSG_TRUNC, buf, sizeof buf, &rv, &addr) == 0 && rv.msg.data_len == 1 &&
              buf[0] == 0xC1, "PICMG probe: cc 0xC1");
    check(close(fd) == 0, "close");
}

int main(int argc, char **argv)
{
    msr();
    if (argc < 2 || strcmp(argv[1], "msr-only"))
        ipmi();
    return failed;
}
