/*
 * HTTPS requests to the Kubernetes API server through libcurl: buffered, streamed, cancellable
 *
 * Each client drives one easy handle through its own multi handle, so that a wait can
 * also watch the stop descriptor (curl_multi_poll()'s extra descriptors): a watch that
 * blocks for minutes ends as soon as the process is told to stop. The multi handle keeps
 * the connection between requests. HTTP/1.1, https only, no redirect followed.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/api/conn.h"
#include "ipam/nv-ipam/api/token.h"

#define CONNECT_TIMEOUT_MS 10000
/* What is kept of a refusal's body: a Status object is a few hundred bytes. */
#define ERROR_BODY_MAX (64u * 1024u)
/* A stop is noticed at the latest this long after it was asked for (libcurl's own waits). */
#define POLL_MS 1000
/* A JSON answer's nesting: Kubernetes objects stay far below. */
#define JSON_MAX_DEPTH 64

struct api_client {
	const struct api_conn *conn;
	CURLM *multi;
	CURL *easy;
	int stop_fd;
	char *user_agent;
	char errbuf[CURL_ERROR_SIZE];
};

/* One request under way. */
struct transfer {
	const struct api_request *req;
	CURL *easy;
	bool decided;         /* the status is known: where the body goes is settled */
	long http;
	bool stream;          /* a 2xx answer with on_data: its pieces go there */
	struct text_buf body; /* otherwise kept */
	size_t max;
	int cb_error;         /* why the write callback stopped the transfer */
};

DEFINE_CLEANUP_FUNC(curl_slist_freep, struct curl_slist *, curl_slist_free_all);

int api_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -ENOMEM;
}

void api_cleanup(void)
{
	curl_global_cleanup();
}

int api_client_new(const struct api_conn *conn, const char *user_agent, int stop_fd,
		   struct api_client **ret)
{
	struct api_client *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->conn = conn;
	c->stop_fd = stop_fd;
	c->multi = curl_multi_init();
	c->easy = curl_easy_init();
	c->user_agent = strdup(user_agent);
	if (!c->multi || !c->easy || !c->user_agent) {
		api_client_free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

void api_client_free(struct api_client *c)
{
	if (!c)
		return;
	if (c->easy)
		curl_easy_cleanup(c->easy);
	if (c->multi)
		curl_multi_cleanup(c->multi);
	free(c->user_agent);
	free(c);
}

void api_response_free(struct api_response *r)
{
	if (!r)
		return;
	free(r->body);
	*r = (struct api_response){ 0 };
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct transfer *t = userdata;
	size_t n = size * nmemb;

	if (!t->decided) {
		/* The first byte of the body: the status line is in, and says where it goes. */
		(void)curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->http);
		t->stream = t->req->on_data && t->http >= 200 && t->http < 300;
		t->max = t->req->on_data ? ERROR_BODY_MAX
		       : t->req->max_body ? t->req->max_body : API_BODY_MAX_BYTES;
		t->decided = true;
	}
	if (t->stream) {
		int r = t->req->on_data(t->req->ctx, data, n);

		if (r < 0) {
			t->cb_error = r;
			return 0;
		}
		return n;
	}
	if (t->body.len + n > t->max) {
		t->cb_error = -EFBIG;
		return 0;
	}
	text_buf_add(&t->body, data, n);
	if (t->body.oom) {
		t->cb_error = -ENOMEM;
		return 0;
	}
	return n;
}

static int curl_errno(CURLcode rc)
{
	/* libcurl's codes are many and grow: the few that tell a caller something are mapped. */
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return -ETIMEDOUT;
	if (rc == CURLE_COULDNT_CONNECT)
		return -ECONNREFUSED;
	if (rc == CURLE_COULDNT_RESOLVE_HOST)
		return -EHOSTUNREACH;
	if (rc == CURLE_OUT_OF_MEMORY)
		return -ENOMEM;
	if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CONNECT_ERROR ||
	    rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CIPHER)
		return -EPROTO;
	return -ECONNRESET;
}

static bool stopped(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) > 0;
}

/* Runs the easy handle to its end through the multi handle; returns its CURLcode. */
static int run(struct api_client *c, CURLcode *ret_rc)
{
	struct curl_waitfd wait = { .fd = c->stop_fd, .events = CURL_WAIT_POLLIN };
	CURLMcode mc;
	int running = 1;

	mc = curl_multi_add_handle(c->multi, c->easy);
	if (mc != CURLM_OK)
		return -ENOMEM;
	for (;;) {
		CURLMsg *msg;
		int left;

		mc = curl_multi_perform(c->multi, &running);
		if (mc != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(c->multi, &left))) {
			if (msg->msg == CURLMSG_DONE && msg->easy_handle == c->easy) {
				*ret_rc = msg->data.result;
				curl_multi_remove_handle(c->multi, c->easy);
				return 0;
			}
		}
		if (stopped(c->stop_fd)) {
			curl_multi_remove_handle(c->multi, c->easy);
			return -ECANCELED;
		}
		wait.revents = 0;
		mc = curl_multi_poll(c->multi, c->stop_fd >= 0 ? &wait : NULL, c->stop_fd >= 0 ? 1 : 0,
				     POLL_MS, NULL);
		if (mc != CURLM_OK)
			break;
	}
	curl_multi_remove_handle(c->multi, c->easy);
	return -ENOMEM;
}

static int set_tls(struct api_client *c)
{
	const struct api_conn *k = c->conn;
	CURLcode rc = CURLE_OK;

	if (k->insecure) {
		rc = curl_easy_setopt(c->easy, CURLOPT_SSL_VERIFYPEER, 0L);
		if (rc == CURLE_OK)
			rc = curl_easy_setopt(c->easy, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (k->ca_pem) {
		struct curl_blob blob = { .data = k->ca_pem, .len = k->ca_pem_len,
					  .flags = CURL_BLOB_COPY };

		rc = curl_easy_setopt(c->easy, CURLOPT_CAINFO_BLOB, &blob);
	} else if (k->ca_file) {
		rc = curl_easy_setopt(c->easy, CURLOPT_CAINFO, k->ca_file);
	}
	if (rc == CURLE_OK && k->cert_pem) {
		struct curl_blob cert = { .data = k->cert_pem, .len = k->cert_pem_len,
					  .flags = CURL_BLOB_COPY };
		struct curl_blob key = { .data = k->key_pem, .len = k->key_pem_len,
					 .flags = CURL_BLOB_COPY };

		rc = curl_easy_setopt(c->easy, CURLOPT_SSLCERT_BLOB, &cert);
		if (rc == CURLE_OK)
			rc = curl_easy_setopt(c->easy, CURLOPT_SSLKEY_BLOB, &key);
	} else if (rc == CURLE_OK && k->cert_file) {
		rc = curl_easy_setopt(c->easy, CURLOPT_SSLCERT, k->cert_file);
		if (rc == CURLE_OK)
			rc = curl_easy_setopt(c->easy, CURLOPT_SSLKEY, k->key_file);
	}
	return rc == CURLE_OK ? 0 : -ENOMEM;
}

/* One attempt with @token (NULL: none). */
static int attempt(struct api_client *c, const struct api_request *req, const char *token,
		   struct api_response *ret, struct cni_err *err)
{
	_cleanup_(curl_slist_freep) struct curl_slist *headers = NULL;
	_cleanup_free_ char *url = NULL, *auth = NULL, *ctype = NULL;
	const char *method = req->method ? req->method : "GET";
	struct transfer t = { .req = req };
	CURLcode rc = CURLE_OK;
	long http = 0;
	int r;

	if (asprintf(&url, "%s%s", c->conn->server, req->path) < 0) {
		url = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	headers = curl_slist_append(NULL, "Accept: application/json");
	if (token && asprintf(&auth, "Authorization: Bearer %s", token) < 0)
		auth = NULL;
	if (headers && req->body &&
	    asprintf(&ctype, "Content-Type: %s", req->content_type ? req->content_type : "application/json") < 0)
		ctype = NULL;
	if (!headers || (token && (!auth || !curl_slist_append(headers, auth))) ||
	    (req->body && (!ctype || !curl_slist_append(headers, ctype))))
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");

	curl_easy_reset(c->easy);
	c->errbuf[0] = '\0';
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (rc == CURLE_OK)                                                                \
			rc = curl_easy_setopt(c->easy, opt, val);                                  \
	} while (0)
	SET(CURLOPT_URL, url);
	SET(CURLOPT_PROTOCOLS_STR, "https");
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_USERAGENT, c->user_agent);
	SET(CURLOPT_HTTPHEADER, headers);
	SET(CURLOPT_ERRORBUFFER, c->errbuf);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	SET(CURLOPT_TCP_KEEPIDLE, 30L);
	SET(CURLOPT_TCP_KEEPINTVL, 10L);
	SET(CURLOPT_WRITEFUNCTION, on_write);
	SET(CURLOPT_WRITEDATA, &t);
	if (req->timeout_ms > 0)
		SET(CURLOPT_TIMEOUT_MS, req->timeout_ms);
	if (req->idle_timeout_s > 0) {
		SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
		SET(CURLOPT_LOW_SPEED_TIME, req->idle_timeout_s);
	}
	if (strcmp(method, "GET") != 0)
		SET(CURLOPT_CUSTOMREQUEST, method);
	if (req->body) {
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		SET(CURLOPT_POSTFIELDS, req->body);
	}
#undef SET
	if (rc != CURLE_OK || set_tls(c) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "cannot set up the request");

	t.easy = c->easy;
	r = run(c, &rc);
	if (r < 0) {
		text_buf_free(&t.body);
		return cni_err_set(err, CNI_ERR_IO, r, "%s %s: %s", method, req->path,
				   r == -ECANCELED ? "stopped" : "libcurl failed");
	}
	(void)curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &http);
	if (rc != CURLE_OK) {
		int e = t.cb_error ? t.cb_error : curl_errno(rc);

		text_buf_free(&t.body);
		if (t.cb_error)
			return cni_err_set(err, CNI_ERR_IO, e, "%s %s: %s", method, req->path,
					   e == -EFBIG ? "the answer is too large" : strerror(-e));
		return cni_err_set(err, CNI_ERR_IO, e, "%s %s%s: %s", method, c->conn->server, req->path,
				   c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
	}
	ret->http = http;
	ret->body = NULL;
	ret->len = 0;
	if (!t.stream) {
		text_buf_putc(&t.body, '\0');
		if (t.body.oom) {
			text_buf_free(&t.body);
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		}
		ret->body = t.body.data;
		ret->len = t.body.len - 1;
	}
	return 0;
}

int api_call(struct api_client *c, const struct api_request *req, struct api_response *ret,
	     struct cni_err *err)
{
	_cleanup_free_ char *token = NULL;
	struct api_token *src = c->conn->token;
	int r;

	if (src && (r = api_token_get(src, false, &token, err)) < 0)
		return r;
	r = attempt(c, req, token, ret, err);
	if (r < 0 || ret->http != 401 || !src || !api_token_path(src))
		return r;
	/* Refused: a rotated token file has a new token by now (kubelet rotates ahead of expiry). */
	{
		_cleanup_free_ char *fresh = NULL;
		struct cni_err e = { 0 };

		if (api_token_get(src, true, &fresh, &e) < 0 || strcmp(fresh, token) == 0)
			return 0;
		api_response_free(ret);
		return attempt(c, req, fresh, ret, err);
	}
}

static const char *http_reason(long http)
{
	switch (http) {
	case 400: return "BadRequest";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "NotFound";
	case 405: return "MethodNotAllowed";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 422: return "Invalid";
	case 429: return "TooManyRequests";
	case 500: return "InternalError";
	case 503: return "ServiceUnavailable";
	case 504: return "Timeout";
	default: return "Unknown";
	}
}

void api_status_from(long http, const char *body, size_t len, struct api_status *ret)
{
	_cleanup_(json_object_putp) struct json_object *o = NULL;
	struct cni_err e = { 0 };
	struct json_object *v;

	*ret = (struct api_status){ .http = http };
	snprintf(ret->reason, sizeof(ret->reason), "%s", http_reason(http));
	if (!body || len == 0 || cjson_parse(body, len, "Status", &o, &e) < 0 ||
	    !json_object_is_type(o, json_type_object))
		return;
	v = cjson_member_any(o, "reason");
	if (json_object_is_type(v, json_type_string) && *json_object_get_string(v))
		text_escape(json_object_get_string(v), strlen(json_object_get_string(v)), ret->reason,
			    sizeof(ret->reason));
	v = cjson_member_any(o, "message");
	if (json_object_is_type(v, json_type_string))
		text_escape(json_object_get_string(v), strlen(json_object_get_string(v)), ret->message,
			    sizeof(ret->message));
}

int api_status_errno(long http)
{
	if (http == 401 || http == 403)
		return -EPERM;
	if (http == 404)
		return -ENOENT;
	if (http == 409)
		return -EEXIST;
	if (http == 410)
		return -ESTALE;
	if (http == 429 || http >= 500)
		return -EAGAIN;
	return -EPROTO;
}

DEFINE_CLEANUP_FUNC(json_tokener_freep, json_tokener *, json_tokener_free);

/* A whole answer as one JSON object: strict, valid UTF-8, bounded depth. */
static int parse_object(const char *buf, size_t len, struct json_object **ret)
{
	_cleanup_(json_tokener_freep) json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	struct json_object *o;

	if (!tok)
		return -ENOMEM;
	if (len > 0x7fffffff || memchr(buf, '\0', len))
		return -EBADMSG;
	/* Strict: anything after the object but whitespace is an error too. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EBADMSG;
	}
	*ret = o;
	return 0;
}

int api_json(struct api_client *c, const char *method, const char *path,
	     struct json_object *body, const char *content_type, struct json_object **ret,
	     struct api_status *ret_status, struct cni_err *err)
{
	const char *text = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL;
	struct api_request req = { .method = method, .path = path, .body = text,
				   .body_len = text ? strlen(text) : 0, .content_type = content_type,
				   .timeout_ms = 60000 };
	struct api_response resp = { 0 };
	struct api_status st;
	int r;

	if (body && !text)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = api_call(c, &req, &resp, err);
	if (r < 0)
		return r;
	if (resp.http < 200 || resp.http >= 300) {
		api_status_from(resp.http, resp.body, resp.len, &st);
		api_response_free(&resp);
		if (ret_status)
			*ret_status = st;
		return cni_err_set(err, CNI_ERR_IO, api_status_errno(st.http), "%s %s: %ld %s%s%s",
				   method ? method : "GET", path, st.http, st.reason,
				   st.message[0] ? ": " : "", st.message);
	}
	if (ret_status)
		*ret_status = (struct api_status){ .http = resp.http };
	r = parse_object(resp.body, resp.len, ret);
	api_response_free(&resp);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "%s %s: the answer is not a JSON object",
				   method ? method : "GET", path);
	return 0;
}

char *api_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = malloc(3 * n + 1), *p = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '.' || ch == '_' || ch == '~') {
			*p++ = (char)ch;
		} else {
			*p++ = '%';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 15];
		}
	}
	*p = '\0';
	return out;
}
