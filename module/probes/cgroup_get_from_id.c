// SPDX-License-Identifier: GPL-2.0
/* offsample probe: cgroup_get_from_id - a cgroup id back to its cgroup (not in 5.10) */
#include <linux/cgroup.h>

struct cgroup *offs_probe(u64 id);
struct cgroup *offs_probe(u64 id)
{
	return cgroup_get_from_id(id);
}
