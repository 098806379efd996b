/* AdmissionReview requests of the validating webhook answered: allowed, or denied naming the field */
#pragma once

#include <stddef.h>

/* The webhook's paths, as the operator's ValidatingWebhookConfiguration names them. */
#define ADMISSION_PATH_IPPOOL "/validate-nv-ipam-nvidia-com-v1alpha1-ippool"
#define ADMISSION_PATH_CIDRPOOL "/validate-nv-ipam-nvidia-com-v1alpha1-cidrpool"

/* A review holds an object of at most 1.5 MiB (etcd's limit) and its old version: JSON this size parses. */
#define ADMISSION_BODY_MAX_BYTES (4u << 20)

struct admission_answer {
	int http;          /* 200 for every review answered, 400 for a body that is none */
	char *body;        /* the AdmissionReview answered (JSON, malloc'ed) */
	size_t len;
	int allowed;       /* 1 allowed, 0 denied, -1 no review */
	char kind[16];     /* "IPPool", "CIDRPool" */
	char name[254];    /* the object's name, for the log */
	char *message;     /* the denial's message (malloc'ed), NULL when allowed */
	size_t warnings;   /* how many warnings the response carries (overlapping pools) */
};

struct admission_pools;

/**
 * admission_review() - answer one AdmissionReview (admission.k8s.io/v1 or v1beta1)
 * @path: the request's path: ADMISSION_PATH_IPPOOL or ADMISSION_PATH_CIDRPOOL
 * @body: the request's body
 * @len: its length
 * @ret: the answer; release with admission_answer_free()
 *
 * CREATE and UPDATE are judged on the new object (validate_ippool(), validate_cidrpool());
 * DELETE and CONNECT are allowed. A denial is code 403 ("Forbidden") with every field
 * error in its message. A body that is not a review with a request is answered with HTTP
 * 400 and a review whose response carries the reason (code 400), as controller-runtime's
 * webhooks do.
 *
 * Return: 0, -ENOENT for a path that is neither, -ENOMEM.
 */
int admission_review(const char *path, const char *body, size_t len, struct admission_answer *ret);

/**
 * admission_review_pools() - admission_review() that also looks at the other pools
 * @path: as admission_review()
 * @body: as admission_review()
 * @len: as admission_review()
 * @pools: the pools now (overlap_hook.h), NULL to skip the look
 * @ret: as admission_review()
 *
 * A valid pool whose prefix overlaps another's is allowed with a warning naming each
 * (overlap_hook_check()), or with @pools->reject denied (403) naming them.
 *
 * Return: as admission_review().
 */
int admission_review_pools(const char *path, const char *body, size_t len,
			   const struct admission_pools *pools, struct admission_answer *ret);

/**
 * admission_answer_free() - release an answer and zero it
 * @a: answer
 */
void admission_answer_free(struct admission_answer *a);
