/* Field errors: a pool's broken fields in Kubernetes' words, the first few kept, joined in one message */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/* What is wrong with one field, as Kubernetes words a field error. */
enum validate_kind {
	VALIDATE_INVALID,   /* "PATH: Invalid value: VALUE: DETAIL" */
	VALIDATE_REQUIRED,  /* "PATH: Required value: DETAIL" */
	VALIDATE_FORBIDDEN, /* "PATH: Forbidden: DETAIL" */
};

/*
 * A hostile object can hold errors by the hundred thousand: the first few are kept (each
 * of bounded length, a value shown by its first bytes), the rest only counted, so that a
 * denial, a log line and an Event stay small whatever the object.
 */
#define VALIDATE_ERRORS_KEPT 10
/* No message of validate_message() is longer (the terminator not counted). */
#define VALIDATE_MESSAGE_MAX 16384

/* The field errors of one object, in the order the reference finds them. */
struct validate_result {
	char **errors; /* "spec.subnet: Invalid value: \"10.0.0.0/33\": is not a valid CIDR" */
	size_t n;      /* at most VALIDATE_ERRORS_KEPT, none repeated; 0 when the object is valid */
	size_t more;   /* errors found past those kept */
};

/* ---- for validate.c's rules: the errors of one object as they are found ---- */

/* The longest path of a field: a longer one is cut (none of the code's is). */
#define PATH_MAX_LEN 160
/* Room for a name of the object in an error's detail (field_name_text()). */
#define NAME_TEXT_SIZE 200

/* The errors of one object being judged. */
struct field_errors {
	struct validate_result *res;
	int err; /* -ENOMEM, sticky */
};

/* The offending value of an Invalid value error, rendered only when the error is kept. */
enum field_value_kind {
	VAL_NONE, /* Required value, Forbidden */
	VAL_JSON, /* a member of the object, as JSON */
	VAL_STR,  /* a string, quoted */
	VAL_RAW,  /* literal text ("0", "true") */
};

struct field_value {
	enum field_value_kind kind;
	struct json_object *o;
	const char *s;
};

#define NO_VALUE ((struct field_value){ VAL_NONE, NULL, NULL })
#define JV(obj) ((struct field_value){ VAL_JSON, (obj), NULL })
#define SV(str) ((struct field_value){ VAL_STR, NULL, (str) })
#define RV(text) ((struct field_value){ VAL_RAW, NULL, (text) })

/**
 * field_errors_add() - one field error: "PATH: KIND: VALUE: DETAIL" (the value only for
 *                      VALIDATE_INVALID), kept unless VALIDATE_ERRORS_KEPT are, or a repeat
 * @c: the object's errors (nothing is added once c->err is set; -ENOMEM sets it)
 * @kind: the error's kind
 * @path: the field's path ("spec.routes[2].dst")
 * @value: the offending value (NO_VALUE, JV(), SV(), RV())
 * @fmt: the detail, printf()-style
 */
void field_errors_add(struct field_errors *c, enum validate_kind kind, const char *path,
		      struct field_value value, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/**
 * field_errors_full() - whether another error would only be counted
 * @c: the object's errors
 *
 * Return: true when VALIDATE_ERRORS_KEPT are kept: what the next one names need not be
 * written out.
 */
bool field_errors_full(const struct field_errors *c);

/**
 * field_name_text() - a name of the object for an error's detail: escaped, cut short
 * @s: the name
 * @buf: room for it
 *
 * Return: @buf.
 */
const char *field_name_text(const char *s, char buf[NAME_TEXT_SIZE]);

/**
 * field_path_child() - "BASE.KEY"
 * @out: PATH_MAX_LEN bytes
 * @base: the parent's path
 * @key: the member's key
 */
void field_path_child(char *out, const char *base, const char *key);

/**
 * field_path_index() - "BASE.KEY[I]"
 * @out: PATH_MAX_LEN bytes
 * @base: the parent's path
 * @key: the array's key
 * @i: the element's index
 */
void field_path_index(char *out, const char *base, const char *key, size_t i);

/**
 * validate_message() - the errors as one message, as Kubernetes aggregates them: the error
 *                      itself when there is one, "[e1, e2, ...]" for several, and past the
 *                      errors kept "[e1, ..., e10, and N more errors]"
 * @res: errors (at least one)
 *
 * The message is at most VALIDATE_MESSAGE_MAX bytes long.
 *
 * Return: malloc'ed text, NULL when out of memory.
 */
char *validate_message(const struct validate_result *res);

/**
 * validate_result_free() - release the errors and zero the result
 * @res: result
 */
void validate_result_free(struct validate_result *res);
