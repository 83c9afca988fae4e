// SPDX-License-Identifier: GPL-2.0
/*
 * VM configuration (config.h): defaults, the keys the command line and INI
 * files share, and their values' checks, each refusal with its reason.
 */
#include <ctype.h>
#include <limits.h>
#include <unistd.h>
#include <errno.h>
#include <ini.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "devices/device.h"
#include "vmm/core/config.h"

void config_defaults(struct vm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ram_bytes = CONFIG_DEFAULT_RAM;
	cfg->cpus = 1;
	cfg->pool_bytes = CONFIG_DEFAULT_POOL;
	cfg->pool_host = (struct pool_host)POOL_HOST_DEFAULTS;
	cfg->huge = true;
	cfg->huge_rate = 0;
	cfg->huge_target = 100;
	cfg->balloon = true;
	strcpy(cfg->console, "stdio");
	strcpy(cfg->swap_dir, "auto");
	cfg->swap_fd = -1;
}

/*
 * A whole number, or a decimal one ("1.5G"), times its suffix's power of
 * 1024 (K M G T, with an optional iB or B; B alone: bytes), or
 * @bare_shift's without one.
 * The result must be a whole number of bytes.
 */
static int parse_size_shift(const char *s, int bare_shift, uint64_t *out)
{
	static const char suffixes[] = "KMGT";
	unsigned long long whole, frac = 0, scale = 1;
	unsigned __int128 bytes;
	const char *p;
	char *end;
	int shift = bare_shift;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	whole = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (*end == '.') {
		for (end++; isdigit((unsigned char)*end); end++) {
			if (scale >= 1000000000000ULL)
				return -EINVAL;
			frac = frac * 10 + (unsigned long long)(*end - '0');
			scale *= 10;
		}
		if (scale == 1)
			return -EINVAL;
	}
	if ((*end == 'B' || *end == 'b') && !end[1]) {
		shift = 0;	/* "4096B": bytes, whatever a bare number means */
		end++;
	}
	if (*end) {
		p = strchr(suffixes, toupper((unsigned char)*end));
		if (!p)
			return -EINVAL;
		shift = 10 * (int)(p - suffixes + 1);
		end++;
		if (!strcasecmp(end, "iB") || !strcasecmp(end, "B"))
			end += strlen(end);
		if (*end)
			return -EINVAL;
	}
	bytes = ((unsigned __int128)whole * scale + frac) << shift;
	if (bytes % scale)
		return -EINVAL;
	bytes /= scale;
	if (bytes > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)bytes;
	return 0;
}

int config_parse_size(const char *s, uint64_t *out)
{
	return parse_size_shift(s, 0, out);
}

bool config_key_is_size(const char *key)
{
	return !strcmp(key, "ram") || !strcmp(key, "pool");
}

/* QEMU's -m habit: a bare number of memory is MiB. */
int config_parse_mem_size(const char *s, uint64_t *out)
{
	return parse_size_shift(s, 20, out);
}

int config_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int set_string(char *dst, size_t size, const char *value)
{
	if (!*value || strlen(value) >= size)
		return -EINVAL;
	strcpy(dst, value);
	return 0;
}

static int set_name(struct vm_config *cfg, const char *value)
{
	for (const char *p = value; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
			return -EINVAL;
	return set_string(cfg->name, sizeof(cfg->name), value);
}

static int parse_uint(const char *value, unsigned long max, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*value))
		return -EINVAL;
	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

/* "2.5" -> 250: a ratio from 1 to 16 with two decimals at most, in %. */
static int parse_ratio(const char *value, unsigned int *pct)
{
	unsigned int whole = 0, frac = 0, digits = 0;
	const char *p = value;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	while (isdigit((unsigned char)*p) && whole <= 16)
		whole = whole * 10 + (unsigned int)(*p++ - '0');
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p) && digits < 2; p++, digits++)
			frac = frac * 10 + (unsigned int)(*p - '0');
	if (*p || (digits == 0 && value[strlen(value) - 1] == '.'))
		return -EINVAL;
	frac *= digits == 1 ? 10 : 1;
	if (whole * 100 + frac < 100 || whole * 100 + frac > 1600)
		return -EINVAL;
	*pct = whole * 100 + frac;
	return 0;
}

static int set_cpus(struct vm_config *cfg, const char *value)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (errno || *end || !*value || v < 1 || v > VM_MAX_CPUS)
		return -EINVAL;
	cfg->cpus = (unsigned int)v;
	return 0;
}

static int set_console(struct vm_config *cfg, const char *value)
{
	static const char *const kinds[] = { "stdio", "pty", "none", "socket:", "file:" };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i]);

		if (kinds[i][n - 1] == ':' ? !strncmp(value, kinds[i], n) && value[n]
					   : !strcmp(value, kinds[i]))
			return set_string(cfg->console, sizeof(cfg->console), value);
	}
	return -EINVAL;
}

static const char *const fault_names[] = {
	[VM_FAULT_AUTO] = "auto", [VM_FAULT_HUGE] = "huge", [VM_FAULT_4K] = "4k",
};

const char *config_fault_name(enum vm_fault_policy f)
{
	return (unsigned int)f < sizeof(fault_names) / sizeof(fault_names[0]) ?
	       fault_names[f] : "?";
}

static int set_fault(struct vm_config *cfg, const char *value)
{
	for (unsigned int i = 0; i < sizeof(fault_names) / sizeof(fault_names[0]); i++)
		if (!strcmp(value, fault_names[i])) {
			cfg->fault = i;
			return 0;
		}
	return -EINVAL;
}

#define BOOL_WORDS "on or off (yes/no, true/false, 1/0 too)"

/*
 * Cloud Hypervisor's --memory size=SIZE and --cpus boot=N put the value
 * behind a key; gpmm takes the value alone.
 */
static const char *keyed_value_hint(const char *key, const char *value)
{
	if (!strcmp(key, "cpus") && !strncmp(value, "boot=", 5))
		return " (Cloud Hypervisor's boot=N is N alone here)";
	if (!strcmp(key, "ram") && !strncmp(value, "size=", 5))
		return " (Cloud Hypervisor's size=SIZE is SIZE alone here)";
	return "";
}

int config_set(struct vm_config *cfg, const char *key, const char *value,
	       char *err, size_t errlen)
{
	const char *want = NULL;
	int ret;

	if (!strcmp(key, "name")) {
		ret = set_name(cfg, value);
		want = "letters, digits, '-', '_' or '.', at most 63";
	} else if (!strcmp(key, "ram")) {
		ret = config_parse_mem_size(value, &cfg->ram_bytes);
		want = "a size such as 512M, 1.5G or 256 (MiB)";
	} else if (!strcmp(key, "pool")) {
		ret = config_parse_mem_size(value, &cfg->pool_bytes);
		want = "a size such as 1G or 512 (MiB)";
	} else if (!strcmp(key, "pool_huge")) {
		ret = config_parse_bool(value, &cfg->pool_host.huge);
		want = BOOL_WORDS;
	} else if (!strcmp(key, "fault")) {
		ret = set_fault(cfg, value);
		want = "huge, 4k or auto";
	} else if (!strcmp(key, "pool_populate")) {
		ret = config_parse_bool(value, &cfg->pool_host.populate);
		want = BOOL_WORDS;
	} else if (!strcmp(key, "pool_release_ms")) {
		ret = parse_uint(value, 3600000, &cfg->pool_host.release_ms);
		want = "milliseconds a free 2 MiB block stays before it goes back, 0 for never";
	} else if (!strcmp(key, "cpus")) {
		ret = set_cpus(cfg, value);
		want = "a number from 1 to 32";
	} else if (!strcmp(key, "kernel")) {
		ret = set_string(cfg->kernel, sizeof(cfg->kernel), value);
		want = "a file name";
	} else if (!strcmp(key, "initrd")) {
		ret = set_string(cfg->initrd, sizeof(cfg->initrd), value);
		want = "a file name";
	} else if (!strcmp(key, "append")) {
		ret = strlen(value) < sizeof(cfg->append) ? 0 : -EINVAL;
		if (!ret)
			strcpy(cfg->append, value);
		want = "a kernel command line shorter than 2048 bytes";
	} else if (!strcmp(key, "console")) {
		ret = set_console(cfg, value);
		want = "stdio, pty, socket:PATH, file:PATH or none";
	} else if (!strcmp(key, "disk")) {
		ret = set_string(cfg->disk, sizeof(cfg->disk), value);
		want = "a raw image file name";
	} else if (!strcmp(key, "net")) {
		if (cfg->nr_net == MACHINE_NET_MAX) {
			snprintf(err, errlen, "net %s: a VM has %d interfaces at most", value,
				 MACHINE_NET_MAX);
			return -EINVAL;
		}
		ret = net_spec_parse(value, &cfg->net[cfg->nr_net], err, errlen);
		if (ret)
			return ret;
		cfg->nr_net++;
	} else if (!strcmp(key, "disk_readonly")) {
		ret = config_parse_bool(value, &cfg->disk_readonly);
		want = BOOL_WORDS;
	} else if (!strcmp(key, "balloon")) {
		ret = config_parse_bool(value, &cfg->balloon);
		want = BOOL_WORDS;
	} else if (!strcmp(key, "balloon_reporting")) {
		bool on;

		ret = config_parse_bool(value, &on);
		cfg->balloon_no_reporting = !ret && !on;
		want = BOOL_WORDS;
	} else if (!strcmp(key, "swap")) {
		cfg->swap_dir[0] = '\0';
		ret = strcmp(value, "off") ? set_string(cfg->swap_dir, sizeof(cfg->swap_dir),
							value) : 0;
		want = "off, auto or a directory for the swap file";
	} else if (!strcmp(key, "overcommit")) {
		ret = parse_ratio(value, &cfg->pool_host.overcommit_pct);
		want = "a ratio from 1 to 16 such as 2.5 (RAM lent per byte of pool)";
	} else if (!strcmp(key, "qmp")) {
		ret = set_string(cfg->qmp_path, sizeof(cfg->qmp_path), value);
		want = "a socket path shorter than 108 bytes";
	} else if (!strcmp(key, "prefault")) {
		ret = config_parse_bool(value, &cfg->prefault);
		want = BOOL_WORDS;
	} else if (!strcmp(key, "huge")) {
		ret = config_parse_bool(value, &cfg->huge);
		want = BOOL_WORDS;
	} else if (!strcmp(key, "huge_fill")) {
		ret = config_parse_bool(value, &cfg->huge_fill);
		want = BOOL_WORDS;
	} else if (!strcmp(key, "huge_rate")) {
		ret = parse_uint(value, 1000000, &cfg->huge_rate);
		want = "2 MiB ranges per second, 0 for no limit";
	} else if (!strcmp(key, "huge_target")) {
		ret = parse_uint(value, 100, &cfg->huge_target);
		want = "a percentage, 0 to 100";
	} else {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -EINVAL;
	}
	if (ret)
		snprintf(err, errlen, "bad value '%s' for %s: want %s%s", value, key, want,
			 keyed_value_hint(key, value));
	return ret;
}

/*
 * inih reads on after a line it or the handler refused and reports the
 * first such line: the handler keeps the first refusal's words and the
 * line they belong to, counted by the reader as inih counts (one per
 * read), so a later line's refusal cannot be printed under an earlier
 * line's number, nor a refused key be called a syntax error.
 */
struct ini_ctx {
	struct vm_config *cfg;
	const char *dir;	/* the file's directory: relative paths start there */
	FILE *f;
	int lineno;		/* reads so far */
	int err_line;		/* line of the first refusal, 0 = none */
	char why[256];		/* its words */
};

static char *config_read_line(char *str, int num, void *stream)
{
	struct ini_ctx *c = stream;
	char *s = fgets(str, num, c->f);

	c->lineno += s != NULL;
	return s;
}

/*
 * inih cuts a comment after ';' only: a '#' after a space starts one too,
 * as in the shipped configs. A value that needs " #" cannot have it.
 */
static void cut_comment(char *value)
{
	char *p = value, *end;

	while ((p = strchr(p, '#')) && p != value && !isspace((unsigned char)p[-1]))
		p++;
	if (p)
		*p = '\0';
	end = value + strlen(value);
	while (end > value && isspace((unsigned char)end[-1]))
		*--end = '\0';
}

/* A config's files are named from where the config is, not from the cwd. */
static bool is_path_key(const char *name)
{
	return !strcmp(name, "kernel") || !strcmp(name, "initrd") || !strcmp(name, "disk");
}

static int config_ini_line(void *user, const char *section, const char *name,
		       const char *value)
{
	struct ini_ctx *c = user;
	char why[sizeof(c->why)], val[PATH_MAX + 2048];
	int ret;

	snprintf(val, sizeof(val), "%s", value);
	cut_comment(val);
	if (is_path_key(name) && val[0] && val[0] != '/' && strcmp(c->dir, ".")) {
		char rel[sizeof(val)];

		memcpy(rel, val, sizeof(rel));
		if (snprintf(val, sizeof(val), "%s/%s", c->dir, rel) >= (int)sizeof(val))
			val[0] = '\0';	/* refused below as an empty name */
	}
	if (*section && strcmp(section, "vm")) {
		snprintf(why, sizeof(why), "unknown section [%s]", section);
		ret = -EINVAL;
	} else {
		ret = config_set(c->cfg, name, val, why, sizeof(why));
	}
	if (ret && !c->err_line) {
		c->err_line = c->lineno;
		memcpy(c->why, why, sizeof(why));
	}
	return ret == 0;
}

int config_load(const char *path, struct vm_config *cfg, char *err,
		size_t errlen)
{
	struct ini_ctx c = { .cfg = cfg };
	char dir[PATH_MAX];
	int line;

	snprintf(dir, sizeof(dir), "%s", path);
	c.dir = dirname(dir);
	c.f = fopen(path, "r");
	if (!c.f) {
		snprintf(err, errlen, "cannot open config %s: %s", path, strerror(errno));
		return -ENOENT;
	}
	line = ini_parse_stream(config_read_line, &c, config_ini_line, &c);
	fclose(c.f);
	if (line == -2) {
		snprintf(err, errlen, "out of memory reading %s", path);
		return -ENOMEM;
	}
	if (line > 0) {
		snprintf(err, errlen, "%s:%d: %s", path, line,
			 line == c.err_line ? c.why : "syntax error");
		return -EINVAL;
	}
	return 0;
}

void config_finish(struct vm_config *cfg)
{
	char tmp[PATH_MAX], *base, *dot;

	if (cfg->name[0] || !cfg->kernel[0])
		return;
	snprintf(tmp, sizeof(tmp), "%s", cfg->kernel);
	base = basename(tmp);
	dot = strchr(base, '.');
	if (dot)
		*dot = '\0';
	if (set_name(cfg, base))
		snprintf(cfg->name, sizeof(cfg->name), "vm");
}

int config_check_pool(uint64_t pool_bytes, char *err, size_t errlen)
{
	if (pool_bytes < MM_PAGEBLOCK_SIZE || pool_bytes % MM_PAGEBLOCK_SIZE) {
		snprintf(err, errlen, "pool %llu KiB: want a multiple of 2 MiB (the pool lends"
			 " 2 MiB pageblocks), such as 512M or 1G",
			 (unsigned long long)(pool_bytes >> 10));
		return -EINVAL;
	}
	return 0;
}

int config_check_ram(const struct vm_config *cfg, char *err, size_t errlen)
{
	if (cfg->ram_bytes < MM_PAGEBLOCK_SIZE || cfg->ram_bytes > VM_MAX_RAM ||
	    cfg->ram_bytes % MM_PAGEBLOCK_SIZE) {
		snprintf(err, errlen, "ram %llu KiB: want a multiple of 2 MiB from 2 MiB to %llu GiB"
			 " (guest RAM is backed 2 MiB at a time)",
			 (unsigned long long)(cfg->ram_bytes >> 10), VM_MAX_RAM >> 30);
		return -EINVAL;
	}
	return 0;
}

static int check_file(const char *what, const char *path, int mode, char *err,
		      size_t errlen)
{
	if (!path[0] || !access(path, mode))
		return 0;
	snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
	return -ENOENT;
}

int config_check(const struct vm_config *cfg, char *err, size_t errlen)
{
	int ret;

	if (!cfg->kernel[0]) {
		snprintf(err, errlen, "no kernel: give --kernel FILE or kernel= in a config");
		return -EINVAL;
	}
	ret = config_check_ram(cfg, err, errlen);
	if (!ret)
		ret = check_file("kernel", cfg->kernel, R_OK, err, errlen);
	if (!ret)
		ret = check_file("initrd", cfg->initrd, R_OK, err, errlen);
	if (!ret)
		ret = check_file("disk", cfg->disk, cfg->disk_readonly ? R_OK : R_OK | W_OK,
				 err, errlen);
	return ret;
}
