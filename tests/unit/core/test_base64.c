#include "support.h"

#include <string.h>

#include "core/base64.h"
#include "core/buf.h"

/* RFC 4648 section 10. */
static const char *const rfc[][2] = {
	{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
};

static void encodes_the_rfc_vectors(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(64);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		aj_buf_reset(&b);
		assert_int_equal(aj_base64_encode(&b, rfc[i][0], strlen(rfc[i][0])), 0);
		assert_string_equal(aj_buf_cstr(&b), rfc[i][1]);
	}
	/* every alphabet position, high bits included */
	aj_buf_reset(&b);
	assert_int_equal(aj_base64_encode(&b, "\xfb\xff\xbf\x00\x10\x83", 6), 0);
	assert_string_equal(aj_buf_cstr(&b), "+/+/ABCD");
	aj_buf_release(&b);
}

static void decode_ok(const char *in, const char *want, size_t want_len)
{
	unsigned char out[AJ_BASE64_DECODED_MAX(64)];
	size_t n = 99;

	assert_true(strlen(in) <= 64);
	assert_int_equal(aj_base64_decode(in, strlen(in), out, &n), 0);
	assert_int_equal(n, want_len);
	assert_memory_equal(out, want, n);
}

static void decodes_padded_unpadded_and_wrapped_text(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++)
		decode_ok(rfc[i][1], rfc[i][0], strlen(rfc[i][0]));
	decode_ok("Zm9vYg", "foob", 4);              /* padding left out */
	decode_ok("Zm9vYmE", "fooba", 5);
	decode_ok("Zm9v\nYmFy\n", "foobar", 6);      /* wrapped like a PEM file */
	decode_ok(" Zm8=\r\n\t", "fo", 2);
	decode_ok("+/+/ABCD", "\xfb\xff\xbf\x00\x10\x83", 6);
}

static void rejects_what_is_not_base64(void **state)
{
	static const char *const bad[] = {
		"Zm9v!",      /* outside the alphabet */
		"Zm9v-_",     /* the URL-safe alphabet is another encoding */
		"Zg=a",       /* data after padding */
		"Zm=vYmFy",
		"Z",          /* a lone character holds no byte */
		"Zm9vY",
		"Zh==",       /* spare bits not zero */
		"Zm9=",
		"Zm9vYg=",    /* padding begun but not finished */
		"Zm9vYg===",  /* more padding than a group needs */
		"Zm9v====",
		"=",
	};
	unsigned char out[32];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(aj_base64_decode(bad[i], strlen(bad[i]), out, &n), -1);
}

static void round_trips_every_length(void **state)
{
	unsigned char data[256], out[AJ_BASE64_DECODED_MAX(344)];
	struct aj_buf b = AJ_BUF_INIT(1024);
	size_t len, n;

	(void)state;
	for (len = 0; len < sizeof(data); len++)
		data[len] = (unsigned char)(255 - len);
	for (len = 0; len <= sizeof(data); len++) {
		aj_buf_reset(&b);
		assert_int_equal(aj_base64_encode(&b, data, len), 0);
		assert_int_equal(b.len, (len + 2) / 3 * 4);
		assert_int_equal(aj_base64_decode(aj_buf_cstr(&b), b.len, out, &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(out, data, len);
	}
	aj_buf_release(&b);
}

static void encode_respects_the_buffer_limit(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(7);

	(void)state;
	assert_int_equal(aj_base64_encode(&b, "foobar", 6), -1);
	aj_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encodes_the_rfc_vectors),
		cmocka_unit_test(decodes_padded_unpadded_and_wrapped_text),
		cmocka_unit_test(rejects_what_is_not_base64),
		cmocka_unit_test(round_trips_every_length),
		cmocka_unit_test(encode_respects_the_buffer_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
