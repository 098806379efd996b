/* A bearer token for the API server: given once, or read from a file that is re-read when it rotates */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "ipam/nv-ipam/api/token.h"

struct api_token {
	pthread_mutex_t lock;
	char *path;      /* NULL: a static token */
	char *token;     /* the last token read, NULL before the first read */
	struct stat seen; /* the file it came from */
	time_t read_at;  /* CLOCK_MONOTONIC seconds of that read */
};

/* Printable ASCII, no space: anything else would end or corrupt the Authorization header. */
static bool token_valid(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

static struct api_token *token_alloc(void)
{
	struct api_token *t = calloc(1, sizeof(*t));

	if (t && pthread_mutex_init(&t->lock, NULL) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

int api_token_new_file(const char *path, struct api_token **ret)
{
	struct api_token *t = token_alloc();

	if (!t)
		return -ENOMEM;
	t->path = strdup(path);
	if (!t->path) {
		api_token_free(t);
		return -ENOMEM;
	}
	*ret = t;
	return 0;
}

int api_token_new_static(const char *token, struct api_token **ret)
{
	struct api_token *t;

	if (!token_valid(token, strlen(token)))
		return -EINVAL;
	t = token_alloc();
	if (!t)
		return -ENOMEM;
	t->token = strdup(token);
	if (!t->token) {
		api_token_free(t);
		return -ENOMEM;
	}
	*ret = t;
	return 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Reads the file into t->token; called with the lock held. */
static int token_read(struct api_token *t, const struct stat *st, struct cni_err *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, start = 0;
	int r;

	r = file_read(t->path, API_TOKEN_MAX_BYTES, &buf, &len);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read the token file %s: %s", t->path,
				   r == -EFBIG ? "too large" : strerror(-r));
	while (start < len && strchr(" \t\r\n", buf[start]))
		start++;
	while (len > start && strchr(" \t\r\n", buf[len - 1]))
		len--;
	if (!token_valid(buf + start, len - start))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "the token file %s holds no token (empty, or not printable ASCII)",
				   t->path);
	free(t->token);
	t->token = strndup(buf + start, len - start);
	if (!t->token)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	t->seen = *st;
	t->read_at = (time_t)(clock_mono_ms() / 1000);
	return 0;
}

int api_token_get(struct api_token *t, bool reread, char **ret, struct cni_err *err)
{
	_cleanup_free_ char *copy = NULL;
	struct stat st;
	int r = 0;

	pthread_mutex_lock(&t->lock);
	if (t->path) {
		if (stat(t->path, &st) < 0) {
			r = cni_err_set(err, CNI_ERR_IO, -errno, "cannot read the token file %s: %s",
					t->path, strerror(errno));
			goto out;
		}
		if (!t->token || reread || !same_file(&st, &t->seen) ||
		    (time_t)(clock_mono_ms() / 1000) - t->read_at >= API_TOKEN_RECHECK_SECONDS)
			r = token_read(t, &st, err);
		if (r < 0)
			goto out;
	}
	copy = strdup(t->token);
	if (!copy) {
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto out;
	}
	*ret = TAKE_PTR(copy);
out:
	pthread_mutex_unlock(&t->lock);
	return r;
}

const char *api_token_path(const struct api_token *t)
{
	return t->path;
}

void api_token_free(struct api_token *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->path);
	if (t->token)
		explicit_bzero(t->token, strlen(t->token));
	free(t->token);
	free(t);
}
