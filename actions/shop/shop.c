#include "common.h"
#include "handler.h"
const struct handler_def shop_handlers[] = {{NULL, NULL}};
