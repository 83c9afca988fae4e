// SPDX-License-Identifier: GPL-2.0
/*
 * A network interface's spec, as a VM config's `net` key, `gpmm run --net`
 * and the QEMU front end's -netdev give it (devices/device.h): read here,
 * apart from the device model, so that the config and command-line
 * parsers (and their fuzz targets) take it without the device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/device.h"

static int parse_mac(const char *s, size_t len, uint8_t mac[6])
{
	unsigned int b[6];
	char tail, tmp[32];

	if (len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (sscanf(tmp, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	/* a multicast address cannot be an interface's own */
	return (mac[0] & 1) ? -EINVAL : 0;
}

int net_spec_parse(const char *spec, struct machine_net *out, char *err, size_t errlen)
{
	const char *s = spec;

	*out = (struct machine_net){ .fd = -1, .offload = true };
	while (*s) {
		size_t len = strcspn(s, ",");
		const char *eq = memchr(s, '=', len);
		size_t klen = eq ? (size_t)(eq - s) : len;
		const char *v = eq ? eq + 1 : s + len;
		size_t vlen = eq ? len - klen - 1 : 0;
		char num[16];
		char *end;
		long fd;

		if (klen == 3 && !strncmp(s, "tap", 3) && vlen && vlen < MACHINE_IFNAMSIZ &&
		    !memchr(v, '/', vlen)) {
			memcpy(out->tap, v, vlen);
			out->tap[vlen] = '\0';
		} else if (klen == 2 && !strncmp(s, "fd", 2) && vlen && vlen < sizeof(num)) {
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			errno = 0;
			fd = strtol(num, &end, 10);
			if (errno || *end || fd < 0 || fd > 65535)
				goto bad;
			out->fd = (int)fd;
		} else if (klen == 3 && !strncmp(s, "mac", 3)) {
			if (parse_mac(v, vlen, out->mac))
				goto bad;
			out->mac_set = true;
		} else if (klen == 7 && !strncmp(s, "offload", 7) && vlen == 2 &&
			   !strncmp(v, "on", 2)) {
			out->offload = true;
		} else if (klen == 7 && !strncmp(s, "offload", 7) && vlen == 3 &&
			   !strncmp(v, "off", 3)) {
			out->offload = false;
		} else {
			goto bad;
		}
		s += len + (s[len] == ',');
	}
	if (!out->tap[0] == (out->fd < 0)) {
		snprintf(err, errlen, "net %.200s: give tap=NAME or fd=N (one of them)", spec);
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(err, errlen, "net %.200s: bad part '%.*s': want tap=NAME (up to %d "
		 "characters), fd=N, mac=52:54:00:12:34:56 (not multicast) or offload=on|off",
		 spec, (int)strcspn(s, ","), s, MACHINE_IFNAMSIZ - 1);
	return -EINVAL;
}
