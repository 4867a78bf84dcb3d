// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "abi/vm_name.h"
#include "base/log.h"

int vm_name_check(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > VM_NAME_MAX)
		return hvm_set_error(
			-EINVAL, "--name: '%s' must be 1 to %d characters long",
			name ? name : "", VM_NAME_MAX);
	if (name[0] == '.' || name[0] == '-')
		return hvm_set_error(-EINVAL,
				     "--name: '%s' must not start with '%c'",
				     name, name[0]);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
			continue;
		return hvm_set_error(
			-EINVAL,
			"--name: '%s' has a character outside A-Z, a-z, 0-9, '.', '_' and '-'",
			name);
	}
	return 0;
}
