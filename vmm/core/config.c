// SPDX-License-Identifier: GPL-2.0
/*
 * VM configuration (config.h): defaults, the keys the command line and INI
 * files share, and their values' checks, each refusal with its reason.
 */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
}

int config_parse_size(const char *s, uint64_t *out)
{
	static const char suffixes[] = "KMGT";
	unsigned long long v;
	const char *p;
	char *end;
	int shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
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
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
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

int config_set(struct vm_config *cfg, const char *key, const char *value,
	       char *err, size_t errlen)
{
	const char *want = NULL;
	int ret;

	if (!strcmp(key, "name")) {
		ret = set_name(cfg, value);
		want = "letters, digits, '-', '_' or '.', at most 63";
	} else if (!strcmp(key, "ram")) {
		ret = config_parse_size(value, &cfg->ram_bytes);
		want = "a size such as 512M or 2G";
	} else if (!strcmp(key, "pool")) {
		ret = config_parse_size(value, &cfg->pool_bytes);
		want = "a size such as 1G";
	} else if (!strcmp(key, "pool_huge")) {
		ret = config_parse_bool(value, &cfg->pool_host.huge);
		want = "yes or no";
	} else if (!strcmp(key, "fault")) {
		ret = set_fault(cfg, value);
		want = "huge, 4k or auto";
	} else if (!strcmp(key, "pool_populate")) {
		ret = config_parse_bool(value, &cfg->pool_host.populate);
		want = "yes or no";
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
	} else if (!strcmp(key, "disk_readonly")) {
		ret = config_parse_bool(value, &cfg->disk_readonly);
		want = "yes or no";
	} else if (!strcmp(key, "balloon")) {
		ret = config_parse_bool(value, &cfg->balloon);
		want = "yes or no";
	} else if (!strcmp(key, "balloon_reporting")) {
		bool on;

		ret = config_parse_bool(value, &on);
		cfg->balloon_no_reporting = !ret && !on;
		want = "yes or no";
	} else if (!strcmp(key, "qmp")) {
		ret = set_string(cfg->qmp_path, sizeof(cfg->qmp_path), value);
		want = "a socket path shorter than 108 bytes";
	} else if (!strcmp(key, "prefault")) {
		ret = config_parse_bool(value, &cfg->prefault);
		want = "yes or no";
	} else if (!strcmp(key, "huge")) {
		ret = config_parse_bool(value, &cfg->huge);
		want = "yes or no";
	} else if (!strcmp(key, "huge_fill")) {
		ret = config_parse_bool(value, &cfg->huge_fill);
		want = "yes or no";
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
		snprintf(err, errlen, "bad value '%s' for %s: want %s", value, key, want);
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

static int config_ini_line(void *user, const char *section, const char *name,
		       const char *value)
{
	struct ini_ctx *c = user;
	char why[sizeof(c->why)];
	int ret;

	if (*section && strcmp(section, "vm")) {
		snprintf(why, sizeof(why), "unknown section [%s]", section);
		ret = -EINVAL;
	} else {
		ret = config_set(c->cfg, name, value, why, sizeof(why));
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
	int line;

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
