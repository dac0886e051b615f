/*
 * exec.h - run a command in a pod's container (the Kubernetes exec protocol).
 *
 * The request is GET .../namespaces/NS/pods/POD/exec?command=...&stdin=...
 * upgraded to a WebSocket (libwebsockets) with the subprotocol
 * v5.channel.k8s.io, or v4.channel.k8s.io when the server has no v5. Every
 * binary message starts with a stream byte: 0 stdin, 1 stdout, 2 stderr,
 * 3 error (the command's final metav1.Status as JSON), 4 resize. v5 adds the
 * message {255, stream} that closes a stream; it is how the client ends
 * stdin. v4 has no way to end stdin, so a command that must see the end of
 * its input has to read a known number of bytes.
 *
 * The framing below is pure (no I/O): encoding messages, decoding messages
 * that arrive in pieces split at any byte, and reading the final Status.
 * aj_exec_run() drives one connection with the client's server, CA,
 * client certificate and bearer token; the server certificate is verified.
 *
 * Ownership: results own their buffers (aj_exec_result_release). The
 * request and its callbacks belong to the caller.
 */
#ifndef AJ_KUBE_EXEC_H
#define AJ_KUBE_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

struct aj_errors;
struct aj_kube;

enum {
	AJ_EXEC_STDIN = 0,
	AJ_EXEC_STDOUT = 1,
	AJ_EXEC_STDERR = 2,
	AJ_EXEC_ERROR = 3,
	AJ_EXEC_RESIZE = 4,
	AJ_EXEC_CLOSE = 255       /* v5: the payload is the stream closed */
};

#define AJ_EXEC_PROTOCOL_V5 "v5.channel.k8s.io"
#define AJ_EXEC_PROTOCOL_V4 "v4.channel.k8s.io"

/* Append one message: the stream byte, then len bytes. 0 / -1. */
int aj_exec_frame(struct aj_buf *out, int stream, const void *data, size_t len);

/*
 * Receives the payload of each message in order, possibly in several
 * calls per message; for AJ_EXEC_CLOSE the payload is the closed stream's
 * byte. `end` is set on the call that completes a message (len may be 0).
 * 0, or -1 after adding to err (decoding stops).
 */
typedef int (*aj_exec_sink)(void *data, int stream, const void *buf, size_t len,
			    int end, struct aj_errors *err);

struct aj_exec_decoder {
	int v5;                   /* 255 allowed */
	int in_message;           /* a message began and has not ended */
	int stream;               /* of the current message; -1 before its first byte */
	aj_exec_sink sink;
	void *sink_data;
};

void aj_exec_decoder_init(struct aj_exec_decoder *d, int v5, aj_exec_sink sink,
			  void *sink_data);

/*
 * Feed one piece of a WebSocket message. `first` marks the piece that
 * starts a message, `final` the one that ends it; a message may come in any
 * number of pieces, including empty ones. An unknown stream byte, a piece
 * that continues no message or an empty message is an error. 0 / -1.
 */
int aj_exec_decode(struct aj_exec_decoder *d, const void *buf, size_t len,
		   int first, int final, struct aj_errors *err);

/*
 * Read the Status from the error stream. Success gives 0 and *exit_code 0;
 * a command that exited non-zero gives 0 and its code (details.causes
 * reason ExitCode). Any other failure is -1 with the Status message. 0 / -1.
 */
int aj_exec_status_parse(const char *json, size_t len, int *exit_code,
			 struct aj_errors *err);

/* Supplies stdin: up to cap bytes into buf, *len 0 at the end. 0 / -1. */
typedef int (*aj_exec_reader)(void *data, void *buf, size_t cap, size_t *len,
			      struct aj_errors *err);

struct aj_exec_request {
	const char *ns;
	const char *pod;
	const char *container;    /* NULL: the pod's only container */
	const char *const *argv;  /* the command, one argument each */
	size_t argc;
	aj_exec_reader read;      /* NULL: no stdin */
	void *read_data;
	size_t out_max;           /* stdout and stderr kept, each (0: 64 KiB) */
	int idle_timeout;         /* seconds without traffic before giving up (0: 60) */
};

struct aj_exec_result {
	int protocol;             /* 5 or 4, as negotiated */
	int exit_code;
	uint64_t sent;            /* stdin bytes sent */
	struct aj_buf out;        /* stdout, up to out_max */
	struct aj_buf err;        /* stderr, up to out_max */
};

void aj_exec_result_init(struct aj_exec_result *r);
void aj_exec_result_release(struct aj_exec_result *r);

/*
 * Run the command and wait for its Status. 0 when it ran to the end
 * (res->exit_code says how it ended); -1 when it could not be started, the
 * server refused the upgrade, the connection dropped before the Status
 * arrived, or nothing moved for idle_timeout seconds. Messages name the pod.
 */
int aj_exec_run(struct aj_kube *k, const struct aj_exec_request *r,
		struct aj_exec_result *res, struct aj_errors *err);

#endif
