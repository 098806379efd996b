/* The keys a plugin reads, and a warning for a config member that is a near miss of one */
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "common/cni/conf-keys.h"
#include "common/util/json-go.h"
#include "common/util/log.h"
#include "common/util/text.h"

/* What the spec, libcni and Multus put in every plugin's config, and this suite's logging. */
static const char *const every_config[] = {
	"cniVersion", "name", "type", "ipam", "dns", "prevResult", "runtimeConfig", "args",
	"capabilities", "logFile", "logLevel", "cni.dev/valid-attachments", "cni.dev/attachments",
	NULL,
};

/*
 * The key of @keys nearer to @name than *@best edits, *@best lowered to its distance (0
 * and NULL when @name is one of them, in any case); @found when none is nearer.
 */
static const char *nearest(const char *name, const char *const *keys, unsigned int *best,
			   const char *found)
{
	for (size_t i = 0; keys && keys[i]; i++) {
		/* Two edits turn a short key into another ("mtu", "mac"): one for those. */
		unsigned int max = strlen(keys[i]) <= 4 ? 1 : 2;
		unsigned int d;

		if (strcasecmp(name, keys[i]) == 0) {
			*best = 0;
			return NULL;
		}
		d = text_distance(name, keys[i], max);
		if (d <= max && d < *best) {
			*best = d;
			found = keys[i];
		}
	}
	return found;
}

const char *cni_conf_key_near(const char *name, const char *const *keys, bool common)
{
	unsigned int best = 3;
	const char *found = NULL;

	found = nearest(name, keys, &best, found);
	if (best && common)
		found = nearest(name, every_config, &best, found);
	return best ? found : NULL;
}

/* The object at a dotted path, each key matched as Go does; NULL when there is none. */
static struct json_object *object_at(struct json_object *root, const char *path)
{
	struct json_object *o = root;
	char key[64];

	while (o && path && *path) {
		size_t len = strcspn(path, ".");

		if (len >= sizeof(key))
			return NULL;
		memcpy(key, path, len);
		key[len] = '\0';
		o = cjson_get(o, key);
		path += len + (path[len] == '.');
	}
	return o && json_object_is_type(o, json_type_object) ? o : NULL;
}

size_t cni_conf_keys_warn(struct json_object *root, const struct cni_conf_keys *tables,
			  const char *source)
{
	size_t warned = 0;

	for (size_t t = 0; tables && tables[t].keys; t++) {
		struct json_object *o = object_at(root, tables[t].object);
		struct json_object_iterator it, end;

		if (!o)
			continue;
		end = json_object_iter_end(o);
		for (it = json_object_iter_begin(o); !json_object_iter_equal(&it, &end);
		     json_object_iter_next(&it)) {
			const char *name = json_object_iter_peek_name(&it);
			const char *near = cni_conf_key_near(name, tables[t].keys, !tables[t].object);
			const char *dot = tables[t].object ? "." : "";
			const char *in = tables[t].object ? tables[t].object : "";

			if (!near)
				continue;
			log_warning("%s key \"%s%s%s\" is not one this plugin reads and is ignored: is "
				    "it \"%s%s%s\" misspelt?", source, in, dot, name, in, dot, near);
			warned++;
		}
	}
	return warned;
}
