/*
 * codec_util: helpers the codec suites (check_codec.c, check_encode.c,
 * check_convert.c) share: decoding any kind into a throwaway struct,
 * loading test/fixtures/codec/ files and comparing JSON. Test-only.
 */
#ifndef TEST_UNIT_CODEC_UTIL_H
#define TEST_UNIT_CODEC_UTIL_H

#include <jansson.h>

#include "model/codec.h"

#define GI (1073741824LL * 1000) /* 1Gi in milli-units */
#define MI (1048576LL * 1000)    /* 1Mi in milli-units */
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define V1 "kueue.x-k8s.io/v1beta1"
#define V2 "kueue.x-k8s.io/v1beta2"

/* Decodes obj (borrowed) as kind k into a throwaway struct and returns
 * the decoder's result; every decoder must leave its struct releasable. */
int decode_any(enum kind k, const json_t *obj, struct field_errors *fe);
/* Loads test/fixtures/codec/<name>; new reference. */
json_t *fixture(const char *name);
/* o[key] as an integer (0 when absent). */
json_int_t int_at(const json_t *o, const char *key);
/* Asserts j equals the inline JSON want, printing both when not. */
void assert_json(const json_t *j, const char *want);

#endif
