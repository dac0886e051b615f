/*
 * cli_code_blob.c - code through Blob Storage, sent by `aj run` with the
 * user's own Azure credential before the AjJob exists (see cli.h).
 *
 * aml and sing get the archive's files, not the archive: an Azure ML code
 * version is a folder (codeUri) that the service snapshots and the job
 * starts in, so uploading the files makes it the job's working directory as
 * it is here, browsable in the studio, with no unpacking step in the
 * command. The archive's SHA-256 still names the folder (aj-code/<D>/) and
 * the version, so a tree maps to exactly one of each. The marker
 * aj-code/<D>.complete, outside the folder so the snapshot leaves it out, is
 * written last: without it an upload counts as interrupted and is redone,
 * with it the upload is skipped. Files go SENDERS at a time, each sender
 * with its own connection (code trees are mostly small files, where
 * round trips, not bandwidth, cost). The tree is archived again once the
 * files are sent, and a changed digest leaves the marker unwritten. Blob folders
 * hold files only: symbolic links and empty directories do not travel.
 *
 * volcano (strategy blob) gets the archive itself, <upload_dir>/<D>.tar.gz,
 * sent in blocks from the temporary file its digest was computed over, so
 * the bytes stored are the bytes hashed. A blob of that name and size is
 * taken as already there. The pods download it (volcano.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "azure/aml.h"
#include "azure/blob.h"
#include "backend/azureml.h"
#include "backend/backend.h"
#include "backend/codeship.h"
#include "cli.h"
#include "code/archive.h"
#include "code/ignore.h"
#include "code/walk.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/strlist.h"

#define MARKER_SUFFIX ".complete"
#define BLOCK_TIMEOUT_MS (10L * 60 * 1000)
#define SENDERS 4                 /* files of a code folder sent at once */

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/*
 * A blob client for account, bearer auth: AJ_AZURE_BLOB_ENDPOINT with
 * {account} replaced (as the controller's --azure-blob-endpoint), else
 * https://<account>.blob.<suffix>.
 */
static int blob_open(struct aj_blob *b, struct aj_token_cache *tokens, const char *account,
		     const char *suffix, struct aj_errors *err)
{
	struct aj_blob_config c;
	struct aj_buf tmpl = AJ_BUF_INIT(AJ_BUF_SMALL), url = AJ_BUF_INIT(AJ_BUF_SMALL);
	int rc;

	aj_blob_config_default(&c);
	c.tokens = tokens;
	c.http.ca_file = env("AJ_AZURE_CA_FILE");
	/* an 8 MiB block over a slow uplink takes minutes, and may still be retried */
	c.http.timeout_ms = BLOCK_TIMEOUT_MS;
	c.retry.max_total_ms = 3 * BLOCK_TIMEOUT_MS;
	if (env("AJ_AZURE_BLOB_ENDPOINT") ? aj_buf_addstr(&tmpl, env("AJ_AZURE_BLOB_ENDPOINT"))
					  : aj_buf_addf(&tmpl, "https://{account}.blob.%s", suffix)) {
		rc = aj_errors_oom(err);
	} else if (aj_blob_endpoint(aj_buf_cstr(&tmpl), account, &url)) {
		rc = aj_errors_oom(err);
	} else {
		c.endpoint = aj_buf_cstr(&url);
		rc = aj_blob_init(b, &c, err);
	}
	aj_buf_release(&tmpl);
	aj_buf_release(&url);
	return rc;
}

/* --- aml and sing: the files, into the default datastore --- */

/*
 * The workspace whose default datastore takes the code: where the job goes
 * (place/workspaces.h), AJ_AZURE_WORKSPACE as the default. Its strings are
 * in store.
 */
static int workspace(const struct aj_jobspec *spec, struct aj_place_workspace *store,
		     struct aj_aml_workspace *ws, struct aj_errors *err)
{
	struct aj_place_workspace dflt;
	int set = aj_cli_azure_workspace(&dflt, err);

	if (set < 0)
		return -1;
	if (aj_place_workspace_of(&spec->target, set ? &dflt : NULL, store))
		return aj_errors_add(err, NULL, "service %s: the code goes to the workspace's default "
				     "datastore, but " AJ_CLI_NO_WORKSPACE " (as the controller's "
				     "--azure-workspace)", spec->target.service);
	ws->subscription = store->subscription;
	ws->resource_group = store->resource_group;
	ws->name = store->name;
	ws->api_version = NULL;
	return 0;
}

/* Where the files go; each sender opens its own client on it. */
struct place {
	struct aj_token_cache *tokens;
	const char *account;
	const char *suffix;
	const char *container;
	const char *digest;
};

struct files {
	const struct place *to;
	struct aj_strlist paths;      /* the files to send, in the walk's order */
	unsigned long long bytes, links;
	size_t next;                  /* the next path to take (atomic) */
	int failed;                   /* a sender failed: the others stop (atomic) */
};

static int collect(const struct aj_walk_entry *ent, void *data, struct aj_errors *err)
{
	struct files *f = data;

	if (ent->ignored)
		return 0;
	if (ent->type == AJ_WALK_SYMLINK)
		f->links++;
	if (ent->type != AJ_WALK_FILE)
		return 0;
	if (aj_strlist_add(&f->paths, ent->path))
		return aj_errors_oom(err);
	f->bytes += (unsigned long long)ent->st->st_size;
	return 0;
}

struct sender {
	pthread_t thread;
	struct files *f;
	struct aj_errors err;
	int rc;
};

/* Take paths until none is left or a sender failed; small files dominate, so they go side by side. */
static void *send_files(void *data)
{
	struct sender *s = data;
	struct files *f = s->f;
	const struct place *to = f->to;
	struct aj_blob_put_options o = { NULL, 1, 0 };
	struct aj_buf name = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_blob blob;
	size_t i;
	int opened;

	s->rc = blob_open(&blob, to->tokens, to->account, to->suffix, &s->err);
	opened = !s->rc;
	while (!s->rc && !__atomic_load_n(&f->failed, __ATOMIC_RELAXED) &&
	       (i = __atomic_fetch_add(&f->next, 1, __ATOMIC_RELAXED)) < f->paths.nr) {
		aj_buf_reset(&name);
		if (aj_buf_addf(&name, AJ_AZUREML_CODE_DIR "/%s/%s", to->digest, f->paths.items[i]))
			s->rc = aj_errors_oom(&s->err);
		else
			s->rc = aj_blob_upload_file(&blob, to->container, aj_buf_cstr(&name),
						    f->paths.items[i], &o, &s->err);
	}
	if (s->rc)
		__atomic_store_n(&f->failed, 1, __ATOMIC_RELAXED);
	if (opened)
		aj_blob_release(&blob);
	aj_buf_release(&name);
	return NULL;
}

/* Send every collected path with up to SENDERS connections. */
static int send_all(struct files *f, struct aj_errors *err)
{
	struct sender s[SENDERS];
	size_t n = f->paths.nr < SENDERS ? f->paths.nr : SENDERS, started, i;
	int rc = 0;

	memset(s, 0, sizeof(s));
	for (i = 0; i < n; i++) {
		s[i].f = f;
		aj_errors_init(&s[i].err);
	}
	/* the first sender runs here; without more threads (resources), fewer senders */
	for (started = 1; started < n; started++)
		if (pthread_create(&s[started].thread, NULL, send_files, &s[started]))
			break;
	if (n)
		send_files(&s[0]);
	for (i = 1; i < started && i < n; i++)
		pthread_join(s[i].thread, NULL);
	for (i = 0; i < n; i++) {
		rc |= s[i].rc;
		aj_errors_splice(err, &s[i].err);
		aj_errors_release(&s[i].err);
	}
	return rc ? -1 : 0;
}

/* Send the files of "." under aj-code/<digest>/, then the marker through blob. */
static int send_tree(const struct aj_jobspec *spec, struct aj_blob *blob, const struct place *to,
		     const char *marker, struct aj_errors *err)
{
	struct files f;
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_archive_result again;
	struct aj_buf manifest = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_blob_put_options mo = { "application/json", 1, 0 };
	int rc;

	memset(&f, 0, sizeof(f));
	f.to = to;
	aj_strlist_init(&f.paths);
	rc = aj_ignore_setup(&ig, ".", &spec->code.ignore, err) ||
	     aj_walk(".", &ig, 0, collect, &f, err) || send_all(&f, err) ||
	     aj_cli_code_archive(spec, -1, &again, err) ? -1 : 0;
	if (!rc && strcmp(again.sha256_hex, to->digest))
		rc = aj_errors_add(err, NULL, "the code changed while it was uploaded (%.12s, then "
				   "%.12s): submit again", to->digest, again.sha256_hex);
	if (!rc && aj_buf_addf(&manifest, "{\"sha256\":\"%s\",\"files\":%zu,\"bytes\":%llu}\n",
			       to->digest, f.paths.nr, f.bytes))
		rc = aj_errors_oom(err);
	if (!rc)
		rc = aj_blob_put(blob, to->container, marker, manifest.buf, manifest.len, &mo, err);
	if (!rc)
		fprintf(stderr, "aj: code %.12s uploaded: %zu files, %llu bytes%s\n", to->digest,
			f.paths.nr, f.bytes,
			f.links ? " (symbolic links left out: blob folders hold files only)" : "");
	aj_ignore_release(&ig);
	aj_strlist_release(&f.paths);
	aj_buf_release(&manifest);
	return rc;
}

static int upload_to_datastore(struct aj_pipeline *pl, char **uri, struct aj_errors *err)
{
	const struct aj_jobspec *spec = &pl->spec;
	struct aj_buf marker = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_place_workspace store;
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors why = AJ_ERRORS_INIT;
	struct aj_aml_workspace ws;
	struct aj_aml_datastore ds;
	struct aj_cli_azure az;
	struct aj_blob blob;
	struct aj_blob_props props;
	struct place place;
	int rc, blob_ready = 0;

	memset(&ds, 0, sizeof(ds));
	memset(&az, 0, sizeof(az));
	rc = workspace(spec, &store, &ws, err) || aj_cli_code_digest(pl, err) ? -1 : 0;
	if (!rc && (aj_cli_azure_open(&az, &why) ||
		    aj_aml_datastore_get(&az.arm, &ws, NULL, &ds, &why))) {
		aj_errors_add(err, NULL, "cannot find where the code goes: the default datastore of "
			      "workspace %s/%s/%s:", ws.subscription, ws.resource_group, ws.name);
		rc = -1;
	}
	if (!rc && (aj_buf_addf(&marker, AJ_AZUREML_CODE_DIR "/%s" MARKER_SUFFIX, spec->code.digest) ||
		    aj_buf_addf(&path, "azureml://datastores/%s/paths/" AJ_AZUREML_CODE_DIR "/%s/",
				ds.name, spec->code.digest)))
		rc = aj_errors_oom(err);
	if (!rc) {
		rc = blob_open(&blob, az.tokens, ds.account, ds.endpoint, &why);
		blob_ready = !rc;
		place = (struct place){ az.tokens, ds.account, ds.endpoint, ds.container,
					spec->code.digest };
		rc = rc || aj_blob_head(&blob, ds.container, aj_buf_cstr(&marker), &props, &why) ||
		     (!props.exists && send_tree(spec, &blob, &place, aj_buf_cstr(&marker), &why))
			     ? -1 : 0;
		if (rc)
			aj_errors_add(err, NULL, "cannot upload the code to datastore %s of workspace %s "
				      "(storage account %s, container %s):", ds.name, ws.name,
				      ds.account, ds.container);
		else if (props.exists)
			fprintf(stderr, "aj: code %.12s is already in datastore %s of workspace %s\n",
				spec->code.digest, ds.name, ws.name);
	}
	if (!rc && !(*uri = aj_buf_detach(&path, NULL)))
		rc = aj_errors_oom(err);
	aj_errors_splice(err, &why);
	if (blob_ready)
		aj_blob_release(&blob);
	aj_cli_azure_close(&az);
	aj_aml_datastore_release(&ds);
	aj_buf_release(&marker);
	aj_buf_release(&path);
	return rc;
}

/* --- volcano: the archive, into the named container --- */

static int upload_archive(struct aj_pipeline *pl, struct aj_errors *err)
{
	const struct aj_jobspec *spec = &pl->spec;
	struct aj_code_blob cb;
	struct aj_archive_result res;
	struct aj_buf name = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors why = AJ_ERRORS_INIT;
	struct aj_blob_put_options opt = { "application/gzip", 1, 1 };
	struct aj_blob_props props;
	struct aj_cli_azure az;
	struct aj_blob blob;
	struct aj_cli_code_reader r = { -1, 0, { 0 } };
	int rc, blob_ready = 0;

	memset(&az, 0, sizeof(az));
	if (aj_code_blob(spec, &cb, err) != 1)
		return -1;
	r.fd = aj_cli_code_archive_file(spec, &res, err);
	if (r.fd < 0)
		return -1;
	rc = aj_code_blob_name(&cb, res.sha256_hex, &name) ? aj_errors_oom(err) : 0;
	if (!rc && spec->code.digest && strcmp(spec->code.digest, res.sha256_hex))
		rc = aj_errors_add(err, NULL, "the code changed while it was being submitted "
				   "(%.12s, then %.12s): submit again", spec->code.digest,
				   res.sha256_hex);
	if (!rc) {
		/* only the credential is used: nothing here goes to ARM */
		rc = aj_cli_azure_open(&az, &why) ||
		     blob_open(&blob, az.tokens, cb.account, "core.windows.net", &why) ? -1 : 0;
		blob_ready = !rc;
		rc = rc || aj_blob_head(&blob, cb.container, aj_buf_cstr(&name), &props, &why) ? -1 : 0;
		if (!rc && props.exists && props.size == res.size) {
			fprintf(stderr, "aj: code %.12s is already in storage account %s, container %s\n",
				res.sha256_hex, cb.account, cb.container);
		} else if (!rc) {
			/* a blob of another size under this name is replaced */
			opt.create_only = !props.exists;
			aj_cli_progress_start(&r.progress, "sending the code", res.size);
			rc = aj_blob_upload(&blob, cb.container, aj_buf_cstr(&name), aj_cli_code_read, &r,
					    &opt, &why);
			aj_cli_progress_end(&r.progress);
			if (!rc)
				fprintf(stderr, "aj: code %.12s uploaded to storage account %s, container "
					"%s: %s (%llu files, %llu bytes)\n", res.sha256_hex, cb.account,
					cb.container, aj_buf_cstr(&name), (unsigned long long)res.files,
					(unsigned long long)res.size);
		}
		if (rc)
			aj_errors_add(err, NULL, "cannot upload the code to storage account %s, "
				      "container %s:", cb.account, cb.container);
	}
	if (!rc && !spec->code.digest)
		rc = aj_pipeline_set_code(pl, res.sha256_hex, err);
	aj_errors_splice(err, &why);
	if (blob_ready)
		aj_blob_release(&blob);
	aj_cli_azure_close(&az);
	close(r.fd);
	aj_buf_release(&name);
	return rc;
}

int aj_cli_code_blob_upload(struct aj_pipeline *pl, char **uri, struct aj_errors *err)
{
	*uri = NULL;
	switch (pl->backend->code_route(&pl->spec)) {
	case AJ_CODE_DATASTORE:
		return upload_to_datastore(pl, uri, err);
	case AJ_CODE_BLOB:
		return upload_archive(pl, err);
	default:
		return 0;
	}
}
