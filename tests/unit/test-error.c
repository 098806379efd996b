/* Unit tests: CNI error JSON */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/cni/error-json.h"
#include "common/util/error.h"

static struct json_object *print_and_parse(const struct cni_err *err, const char *version)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_object *o;

	assert_non_null(f);
	assert_int_equal(cni_err_print(err, version, f), 0);
	fclose(f);
	o = json_tokener_parse(buf);
	free(buf);
	assert_non_null(o);
	return o;
}

static void test_fields(void **state)
{
	struct cni_err err = { 0 };
	struct json_object *o, *v;

	(void)state;
	assert_int_equal(cni_err_set(&err, CNI_ERR_TRY_AGAIN, -EAGAIN, "store locked by %d", 42), -EAGAIN);
	cni_err_details(&err, "lock file %s", "/var/lib/x.lock");
	o = print_and_parse(&err, "1.0.0");
	assert_true(json_object_object_get_ex(o, "cniVersion", &v));
	assert_string_equal(json_object_get_string(v), "1.0.0");
	assert_true(json_object_object_get_ex(o, "code", &v));
	assert_int_equal(json_object_get_int(v), 11);
	assert_true(json_object_object_get_ex(o, "msg", &v));
	assert_string_equal(json_object_get_string(v), "store locked by 42");
	assert_true(json_object_object_get_ex(o, "details", &v));
	assert_string_equal(json_object_get_string(v), "lock file /var/lib/x.lock");
	json_object_put(o);
}

static void test_first_error_wins(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	cni_err_set(&err, CNI_ERR_KERNEL, -EEXIST, "failed to rename");
	/* An undo step failing later must not replace the original cause. */
	assert_int_equal(cni_err_set(&err, CNI_ERR_IPAM, -EIO, "undo failed"), -EIO);
	assert_int_equal(err.code, CNI_ERR_KERNEL);
	assert_string_equal(err.msg, "failed to rename");
}

static void test_no_details_no_version(void **state)
{
	struct cni_err err = { 0 };
	struct json_object *o, *v;

	(void)state;
	cni_err_set(&err, CNI_ERR_DECODE, -EINVAL, "bad \"quotes\" and \\ backslash");
	o = print_and_parse(&err, NULL);
	assert_false(json_object_object_get_ex(o, "details", &v));
	assert_false(json_object_object_get_ex(o, "cniVersion", &v));
	assert_true(json_object_object_get_ex(o, "msg", &v));
	assert_string_equal(json_object_get_string(v), "bad \"quotes\" and \\ backslash");
	json_object_put(o);
}

static void test_unset_is_internal(void **state)
{
	struct cni_err err = { 0 };
	struct json_object *o, *v;

	(void)state;
	o = print_and_parse(&err, "0.4.0");
	assert_true(json_object_object_get_ex(o, "code", &v));
	assert_int_equal(json_object_get_int(v), CNI_ERR_INTERNAL);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_first_error_wins),
		cmocka_unit_test(test_no_details_no_version),
		cmocka_unit_test(test_unset_is_internal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
