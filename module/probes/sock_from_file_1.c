// SPDX-License-Identifier: GPL-2.0
/* offsample probe: sock_from_file - without its error argument (5.12) */
#include <linux/net.h>

struct socket *offs_probe(struct file *f);
struct socket *offs_probe(struct file *f)
{
	return sock_from_file(f);
}
