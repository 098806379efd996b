/* Unit tests: CNI_ARGS parsing */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/cni/args.h"
#include "common/util/error.h"

static void test_pairs_in_order(void **state)
{
	struct cni_args a = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(cni_args_parse("K8S_POD_NAME=p1;K8S_POD_NAMESPACE=ns1;MAC=c2:11:22:33:44:55",
					&a, &err), 0);
	assert_int_equal(a.n, 3);
	assert_string_equal(a.pairs[0].key, "K8S_POD_NAME");
	assert_string_equal(a.pairs[2].value, "c2:11:22:33:44:55");
	assert_string_equal(cni_args_get(&a, "K8S_POD_NAMESPACE"), "ns1");
	assert_null(cni_args_get(&a, "k8s_pod_name")); /* keys are case-sensitive */
	assert_false(a.ignore_unknown);
	cni_args_free(&a);
}

static void test_duplicates_later_wins(void **state)
{
	struct cni_args a = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	/* The shape Multus sends: its own pairs appended after the runtime's. */
	assert_int_equal(cni_args_parse("IgnoreUnknown=true;K8S_POD_UID=uid-1;IgnoreUnknown=1;"
					"K8S_POD_UID=uid-2", &a, &err), 0);
	assert_string_equal(cni_args_get(&a, "K8S_POD_UID"), "uid-2");
	assert_true(a.ignore_unknown);
	cni_args_free(&a);
}

static void test_ignore_unknown_values(void **state)
{
	static const char *const cases[][2] = {
		{ "IgnoreUnknown=1", "1" },     { "IgnoreUnknown=true", "1" },
		{ "IgnoreUnknown=TRUE", "1" },  { "IgnoreUnknown=0", "0" },
		{ "IgnoreUnknown=yes", "0" },   { "IgnoreUnknown=1;IgnoreUnknown=false", "0" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cni_args a = { 0 };
		struct cni_err err = { 0 };

		assert_int_equal(cni_args_parse(cases[i][0], &a, &err), 0);
		assert_int_equal(a.ignore_unknown, cases[i][1][0] == '1');
		cni_args_free(&a);
	}
}

static void test_value_with_equals(void **state)
{
	struct cni_args a = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(cni_args_parse("LABEL=a=b==;EMPTY=", &a, &err), 0);
	assert_string_equal(cni_args_get(&a, "LABEL"), "a=b==");
	assert_string_equal(cni_args_get(&a, "EMPTY"), "");
	cni_args_free(&a);
}

static void test_empty_pairs_skipped(void **state)
{
	struct cni_args a = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(cni_args_parse(";;A=1;;B=2;", &a, &err), 0);
	assert_int_equal(a.n, 2);
	cni_args_free(&a);
	assert_int_equal(cni_args_parse("", &a, &err), 0);
	assert_int_equal(a.n, 0);
	cni_args_free(&a);
}

static void test_invalid_pairs(void **state)
{
	static const char *const bad[] = { "NOEQUALS", "A=1;B", "=value", "A=1;=2" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cni_args a = { 0 };
		struct cni_err err = { 0 };

		assert_int_equal(cni_args_parse(bad[i], &a, &err), -EINVAL);
		assert_int_equal(err.code, CNI_ERR_INVALID_ENV);
		assert_non_null(strstr(err.msg, "invalid pair"));
		assert_int_equal(a.n, 0);
	}
}

static void test_unknown_keys(void **state)
{
	static const char *const known[] = { "MAC", NULL };
	struct cni_args a = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(cni_args_parse("MAC=c2:11:22:33:44:55;FOO=1", &a, &err), 0);
	assert_int_equal(cni_args_check_known(&a, known, &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_ENV);
	assert_non_null(strstr(err.msg, "\"FOO=1\""));
	assert_null(strstr(err.msg, "MAC"));
	cni_args_free(&a);

	err = (struct cni_err){ 0 };
	assert_int_equal(cni_args_parse("IgnoreUnknown=1;FOO=1", &a, &err), 0);
	assert_int_equal(cni_args_check_known(&a, known, &err), 0);
	assert_int_equal(err.code, 0);
	cni_args_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_in_order),
		cmocka_unit_test(test_duplicates_later_wins),
		cmocka_unit_test(test_ignore_unknown_values),
		cmocka_unit_test(test_value_with_equals),
		cmocka_unit_test(test_empty_pairs_skipped),
		cmocka_unit_test(test_invalid_pairs),
		cmocka_unit_test(test_unknown_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
