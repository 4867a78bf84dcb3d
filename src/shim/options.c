// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CreateTaskRequest.options: the runtime options containerd passes. For a
 * runtime other than runc, containerd 1.6 sends either nothing or
 * runtimeoptions.v1.Options (`ctr run --runtime-config-path`, the CRI
 * plugin's ConfigPath): its config_path is the hintvm-runtime
 * configuration file the task's VM is built with, in place of
 * HINTVM_RUNTIME_CONFIG or /etc/hintvm/runtime.conf. Anything else is
 * refused, naming it: options the shim would silently ignore are options
 * that do not do what their writer meant.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime_options.pb-c.h"
#include "shim/shim.h"

int shim_parse_options(const Google__Protobuf__Any *any, char *config_path,
		       size_t len, char *err, size_t errlen)
{
	const char *name = runtimeoptions__v1__options__descriptor.name;
	Runtimeoptions__V1__Options *o;
	struct stat st;
	int ret = 0;

	config_path[0] = '\0';
	if (!any || ((!any->type_url || !*any->type_url) && !any->value.len))
		return 0;
	if (!any->type_url || strcmp(any->type_url, name)) {
		snprintf(
			err, errlen,
			"runtime options of type \"%.200s\": expected none or %s (config_path)",
			any->type_url ? any->type_url : "", name);
		return -EINVAL;
	}
	o = runtimeoptions__v1__options__unpack(NULL, any->value.len,
						any->value.data);
	if (!o) {
		snprintf(err, errlen, "runtime options: not a valid %s message",
			 name);
		return -EINVAL;
	}
	if (o->base.n_unknown_fields) {
		snprintf(
			err, errlen,
			"runtime options: %s with %u field(s) other than type_url and config_path",
			name, o->base.n_unknown_fields);
		ret = -EINVAL;
	} else if (o->type_url[0]) {
		snprintf(
			err, errlen,
			"runtime options: type_url \"%.200s\": hintvm-runtime's configuration file has no type, leave it empty",
			o->type_url);
		ret = -EINVAL;
	} else if (!o->config_path[0]) {
		/* Nothing asked. */
	} else if (o->config_path[0] != '/' || strlen(o->config_path) >= len) {
		snprintf(
			err, errlen,
			"runtime options: config_path \"%.200s\": expected an absolute path shorter than %zu bytes",
			o->config_path, len);
		ret = -EINVAL;
	} else if (stat(o->config_path, &st)) {
		snprintf(err, errlen, "runtime options: config_path %.200s: %s",
			 o->config_path, strerror(errno));
		ret = -ENOENT;
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(
			err, errlen,
			"runtime options: config_path %.200s: not a regular file",
			o->config_path);
		ret = -ENOENT;
	} else {
		strcpy(config_path, o->config_path);
	}
	runtimeoptions__v1__options__free_unpacked(o, NULL);
	return ret;
}
