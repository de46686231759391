/* SPDX-License-Identifier: GPL-2.0 */
/* pin.c: pin one thread, read its state, capture its stacks. */
#ifndef OFFS_PIN_H
#define OFFS_PIN_H

#include "offsample.h"

enum offs_pin offs_pin_capture(struct task_struct *t, struct offs_sample *s,
			       unsigned int max_depth);
void offs_sample_names(struct task_struct *t, struct offs_sample *s);
void offs_user_regs(struct task_struct *t, struct offs_sample *s);
void offs_user_walk(struct task_struct *t, struct offs_sample *s);
/* max_user_depth, within 1..OFFS_MAX_DEPTH_LIMIT. */
unsigned int offs_max_udepth(void);

#endif /* OFFS_PIN_H */
