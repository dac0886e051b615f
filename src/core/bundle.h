/*
 * bundle.h - the AjJob reader is part of the AjJob contract now (ajjob.h,
 * beside its writer); this header only forwards there until the controller
 * includes ajjob.h.
 */
#ifndef AJ_BUNDLE_H
#define AJ_BUNDLE_H

#include "ajjob.h"

#endif
