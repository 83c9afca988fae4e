// SPDX-License-Identifier: GPL-2.0
/* A VM console captured into memory (console_buf.h). */
#include <string.h>

#include "vmm/control/console_buf.h"

void console_buf_init(struct console_buf *c)
{
	pthread_mutex_init(&c->lock, NULL);
	c->len = 0;
	c->text[0] = '\0';
}

void console_buf_write(void *opaque, const char *buf, size_t len)
{
	struct console_buf *c = opaque;

	pthread_mutex_lock(&c->lock);
	if (len > sizeof(c->text) - 1 - c->len)
		len = sizeof(c->text) - 1 - c->len;
	memcpy(c->text + c->len, buf, len);
	c->len += len;
	c->text[c->len] = '\0';
	pthread_mutex_unlock(&c->lock);
}

bool console_buf_has(struct console_buf *c, const char *needle)
{
	bool ret;

	pthread_mutex_lock(&c->lock);
	ret = strstr(c->text, needle) != NULL;
	pthread_mutex_unlock(&c->lock);
	return ret;
}
