package models

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
	"gorm.io/gorm"
)

// Blobs in an S3-compatible store (--blob-store s3://BUCKET?endpoint=…),
// for deployments that outgrow one database. Only the bytes move: a blob's
// row (owner, sum, size) stays in the database, so references, quota,
// dedupe and the release triggers work as with the embedded store, and
// every process sharing a PostgreSQL database sees the same blobs.
//
// An object cannot join the database's transaction, so the order of
// writes keeps the two in step (migration 00031):
//   - an upload puts its objects first, then commits the row that names
//     them; a crash in between leaves objects no row names, which the
//     sweep deletes once they are older than OrphanGrace (no upload takes
//     that long), so an object being uploaded is never taken for one;
//   - a row's deletion, however it happens, queues its objects' keys in
//     blob_deletions by trigger, in the deleting transaction; the queue is
//     drained (objects deleted, then their queue rows) after the commit,
//     at start-up and by the housekeeping goroutine. A crash before the
//     drain leaves the queue to the next one.
//
// So a row never names a missing object, and every object without a row
// is either queued or swept. Keys are never reused (each row's carry a
// random suffix after the owner and sum), so a queued deletion cannot take
// the object of a later upload of the same bytes.

// ErrBlobStoreDown is the S3-compatible blob store not answering (down,
// refusing connections, failing): the request may be tried again (503).
var ErrBlobStoreDown = errors.New("the file store is not answering")

// BlobStoreConfig says where blobs' bytes go; a nil one: the database.
type BlobStoreConfig struct {
	Bucket    string
	Endpoint  string // host:port
	Region    string
	Secure    bool // https (the default); secure=false: plain http
	PathStyle bool // path-style requests (http://host/bucket/key) instead of virtual hosts
	Prefix    string
	AccessKey string
	SecretKey string
	// OrphanGrace is how old an object no row names must be before the
	// sweep deletes it (zero: OrphanGrace); tests shorten it.
	OrphanGrace time.Duration
}

// String is the store as logs may show it: no credentials.
func (c *BlobStoreConfig) String() string {
	if c == nil {
		return "database"
	}
	return "s3://" + c.Bucket + "/" + c.Prefix + " at " + c.Endpoint
}

// ParseBlobStore reads a --blob-store value: "" (the database, nil) or
// s3://BUCKET?endpoint=HOST:PORT[&region=R][&secure=false][&path_style=true][&prefix=P],
// with the credentials from getenv: PALAVER_S3_ACCESS_KEY and
// PALAVER_S3_SECRET_KEY, else AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func ParseBlobStore(raw string, getenv func(string) string) (*BlobStoreConfig, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" {
		return nil, errors.New("it is not an s3://BUCKET?endpoint=HOST:PORT URL")
	}
	if u.User != nil {
		return nil, errors.New("credentials do not go in the URL: set PALAVER_S3_ACCESS_KEY and PALAVER_S3_SECRET_KEY")
	}
	if u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("unexpected path %q: give a key prefix as prefix=", u.Path)
	}
	c := &BlobStoreConfig{Bucket: u.Host, Region: "us-east-1", Secure: true}
	if err := s3utils.CheckValidBucketNameStrict(c.Bucket); err != nil {
		return nil, fmt.Errorf("bucket %q: %v", c.Bucket, err)
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "endpoint":
			c.Endpoint = v
		case "region":
			c.Region = v
		case "prefix":
			c.Prefix = v
		case "secure", "path_style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s=%q is not true or false", k, v)
			}
			if k == "secure" {
				c.Secure = b
			} else {
				c.PathStyle = b
			}
		default:
			return nil, fmt.Errorf("unknown parameter %q (known: endpoint, region, secure, path_style, prefix)", k)
		}
	}
	if c.Endpoint == "" || strings.Contains(c.Endpoint, "/") {
		return nil, errors.New("endpoint=HOST:PORT is required (no scheme: secure=false for plain http)")
	}
	if c.Region == "" {
		return nil, errors.New("region may not be empty")
	}
	if c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	c.AccessKey, c.SecretKey = getenv("PALAVER_S3_ACCESS_KEY"), getenv("PALAVER_S3_SECRET_KEY")
	if c.AccessKey == "" && c.SecretKey == "" {
		c.AccessKey, c.SecretKey = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return nil, errors.New("no credentials: set PALAVER_S3_ACCESS_KEY and PALAVER_S3_SECRET_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	}
	return c, nil
}

// s3Blobs is the S3-compatible store of blobs' bytes.
type s3Blobs struct {
	client *minio.Client
	cfg    BlobStoreConfig
	wake   chan struct{} // a deletion committed, perhaps: drain the queue
}

func newS3Blobs(c *BlobStoreConfig) (*s3Blobs, error) {
	lookup := minio.BucketLookupAuto
	if c.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(c.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Secure:       c.Secure,
		Region:       c.Region,
		BucketLookup: lookup,
		// A store that is down fails the upload in a few seconds (503),
		// rather than after minio's default ten tries.
		MaxRetries: 2,
	})
	if err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	cfg := *c
	if cfg.OrphanGrace == 0 {
		cfg.OrphanGrace = OrphanGrace
	}
	return &s3Blobs{client: client, cfg: cfg, wake: make(chan struct{}, 1)}, nil
}

// root is the folder of every blob's objects: the sweep lists only it.
func (o *s3Blobs) root() string { return o.cfg.Prefix + "blobs/" }

// newKeys names the objects of a new blob row: by owner and sum, and a
// random suffix that no other row will ever have.
func (o *s3Blobs) newKeys(owner int64, sum string, thumbnail bool) (key, thumbKey string) {
	var r [8]byte
	_, _ = rand.Read(r[:])
	key = fmt.Sprintf("%s%d/%s/%s", o.root(), owner, sum, hex.EncodeToString(r[:]))
	if thumbnail {
		thumbKey = key + ".thumb"
	}
	return key, thumbKey
}

// objectErr makes an error of the object store one the request can be
// answered by: the store unreachable or failing is ErrBlobStoreDown.
func objectErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s: %w", op, err)
	}
	if st := minio.ToErrorResponse(err).StatusCode; st == 0 || st >= 500 {
		return fmt.Errorf("%s: %w: %v", op, ErrBlobStoreDown, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

func (o *s3Blobs) put(ctx context.Context, key string, data []byte) error {
	_, err := o.client.PutObject(ctx, o.cfg.Bucket, key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "application/octet-stream"})
	return objectErr("put blob", err)
}

// get reads an object, or its first n bytes when n > 0.
func (o *s3Blobs) get(ctx context.Context, key string, n int64) ([]byte, error) {
	opts := minio.GetObjectOptions{}
	if n > 0 {
		if err := opts.SetRange(0, n-1); err != nil {
			return nil, err
		}
	}
	obj, err := o.client.GetObject(ctx, o.cfg.Bucket, key, opts)
	if err != nil {
		return nil, objectErr("read blob", err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil && minio.ToErrorResponse(err).StatusCode == 416 {
		return []byte{}, nil // a range past the end of an empty object
	}
	return data, objectErr("read blob", err)
}

// remove deletes an object; one already gone is no error.
func (o *s3Blobs) remove(ctx context.Context, key string) error {
	err := o.client.RemoveObject(ctx, o.cfg.Bucket, key, minio.RemoveObjectOptions{})
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		err = nil
	}
	return objectErr("delete blob", err)
}

// stagedBlob is an upload's bytes made ready before the transaction that
// records its blob row: with the S3 store, the objects are put by then
// (key and thumbKey), unless the owner had the blob already.
type stagedBlob struct {
	owner           int64
	sum             string
	data, thumbnail []byte
	key, thumbKey   string
	used            bool // a row of the transaction names key
}

// stageBlob readies an upload's bytes: with the S3 store it puts the
// objects of a new blob, unless the owner has one of this sum (dedupe:
// no second object).
func (s *Store) stageBlob(ctx context.Context, owner int64, sum string, data, thumbnail []byte) (*stagedBlob, error) {
	b := &stagedBlob{owner: owner, sum: sum, data: data, thumbnail: thumbnail}
	if s.objects == nil {
		return b, nil
	}
	var have int64
	if err := s.db.WithContext(ctx).Model(&Blob{}).Where("user_id = ? AND sha256 = ?", owner, sum).Count(&have).Error; err != nil {
		return nil, err
	}
	if have > 0 {
		return b, nil
	}
	return b, s.putObjects(ctx, b)
}

// putObjects puts the objects of a new blob row, or none.
func (s *Store) putObjects(ctx context.Context, b *stagedBlob) error {
	key, thumbKey := s.objects.newKeys(b.owner, b.sum, len(b.thumbnail) > 0)
	if err := s.objects.put(ctx, key, b.data); err != nil {
		return err
	}
	if thumbKey != "" {
		if err := s.objects.put(ctx, thumbKey, b.thumbnail); err != nil {
			s.removeUnnamed(ctx, key)
			return err
		}
	}
	b.key, b.thumbKey = key, thumbKey
	return nil
}

// putBlob records a staged blob in tx unless the owner has one of its sum,
// and gives the blob's id.
func (s *Store) putBlob(ctx context.Context, tx *gorm.DB, b *stagedBlob, at time.Time) (int64, error) {
	row := Blob{UserID: b.owner, SHA256: b.sum, Size: int64(len(b.data)), Data: b.data, Thumbnail: b.thumbnail, CreatedAt: at}
	if s.objects != nil {
		if b.key == "" {
			// The owner had it when staged: that row, if it is still there.
			if id, err := blobID(tx, b.owner, b.sum); id != 0 || err != nil {
				return id, err
			}
			// It went meanwhile (rare): its objects are put now, inside
			// the transaction, still before the row commits.
			if err := s.putObjects(ctx, b); err != nil {
				return 0, err
			}
		}
		row.Data, row.Thumbnail, row.ObjectKey = []byte{}, []byte{}, &b.key
		if b.thumbKey != "" {
			row.ThumbnailKey = &b.thumbKey
		}
	}
	if row.Thumbnail == nil {
		row.Thumbnail = []byte{}
	}
	res := tx.Clauses(onConflictDoNothing).Create(&row)
	if res.Error != nil {
		return 0, res.Error
	}
	if res.RowsAffected == 1 && row.ID != 0 {
		b.used = b.key != ""
		return row.ID, nil
	}
	id, err := blobID(tx, b.owner, b.sum)
	if err == nil && id == 0 {
		err = gorm.ErrRecordNotFound
	}
	return id, err
}

func blobID(tx *gorm.DB, owner int64, sum string) (int64, error) {
	var ids []int64
	err := tx.Model(&Blob{}).Where("user_id = ? AND sha256 = ?", owner, sum).Limit(1).Pluck("id", &ids).Error
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return ids[0], nil
}

// settle deletes the objects a staged blob put that no row took (the
// transaction failed, or another upload of the same bytes won), once its
// transaction has ended (committed: whether it did): unless a row names
// them after all (a commit whose answer was lost), which the check sees;
// when it cannot tell, the sweep deletes them later.
func (s *Store) settle(ctx context.Context, b *stagedBlob, committed bool) {
	if b == nil || b.key == "" || (b.used && committed) {
		return
	}
	s.removeUnnamed(ctx, b.key, b.thumbKey)
}

// removeUnnamed deletes the objects keys no blob row names.
func (s *Store) removeUnnamed(ctx context.Context, keys ...string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var live []string
	for _, k := range keys {
		if k != "" {
			live = append(live, k)
		}
	}
	named, err := s.namedKeys(ctx, live)
	if err != nil {
		return
	}
	for _, k := range live {
		if !named[k] {
			_ = s.objects.remove(ctx, k)
		}
	}
}

// namedKeys says which of keys a blob row names.
func (s *Store) namedKeys(ctx context.Context, keys []string) (map[string]bool, error) {
	out := map[string]bool{}
	for start := 0; start < len(keys); start += deletionChunk {
		chunk := keys[start:min(start+deletionChunk, len(keys))]
		var rows []struct{ ObjectKey, ThumbnailKey *string }
		err := s.db.WithContext(ctx).Model(&Blob{}).Select("object_key, thumbnail_key").
			Where("object_key IN ? OR thumbnail_key IN ?", chunk, chunk).Scan(&rows).Error
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			for _, k := range []*string{r.ObjectKey, r.ThumbnailKey} {
				if k != nil {
					out[*k] = true
				}
			}
		}
	}
	return out, nil
}

// readBlob gives one of the owner's blobs' bytes (or its thumbnail's, or
// with n > 0 its first n bytes) from wherever its row says they are.
func (s *Store) readBlob(ctx context.Context, owner, id int64, thumbnail bool, n int64) ([]byte, error) {
	col, keyCol := "data", "object_key"
	if thumbnail {
		col, keyCol = "thumbnail", "thumbnail_key"
	}
	q := s.db.WithContext(ctx).Model(&Blob{}).Where("id = ? AND user_id = ?", id, owner)
	if n > 0 {
		q = q.Select("substr("+col+", 1, ?), "+keyCol, n)
	} else {
		q = q.Select(col + ", " + keyCol)
	}
	var data []byte
	var key *string
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, gorm.ErrRecordNotFound
	}
	if err := rows.Scan(&data, &key); err != nil {
		return nil, err
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if key == nil {
		return data, nil
	}
	if s.objects == nil {
		return nil, errors.New("read blob: its bytes are in an S3-compatible store, and no --blob-store is set")
	}
	return s.objects.get(ctx, *key, n)
}

// CheckBlobStore checks that the S3-compatible blob store answers and has
// its bucket (nothing to check for the database).
func (s *Store) CheckBlobStore(ctx context.Context) error {
	if s.objects == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ok, err := s.objects.client.BucketExists(ctx, s.objects.cfg.Bucket)
	if err != nil {
		return fmt.Errorf("blob store %s: %w", s.objects.cfg.String(), err)
	}
	if !ok {
		return fmt.Errorf("blob store %s: no bucket %q (create it first)", s.objects.cfg.String(), s.objects.cfg.Bucket)
	}
	return nil
}

// BlobDeletion is an object whose blob row is gone, waiting to be deleted
// (the trigger blobs_objects_release queues it).
type BlobDeletion struct {
	ID        int64     `gorm:"primaryKey"`
	ObjectKey string    `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

// DrainBlobDeletions deletes the queued objects (blob_deletions) and says
// how many went. Several processes may drain at once: deleting an object
// twice does no harm. Without the S3 store the queue is left as it is
// (rows of a store used before, for when it is set again).
func (s *Store) DrainBlobDeletions(ctx context.Context) (int, error) {
	if s.objects == nil {
		return 0, nil
	}
	n := 0
	for {
		var batch []BlobDeletion
		if err := s.db.WithContext(ctx).Order("id").Limit(100).Find(&batch).Error; err != nil {
			return n, wrap("drain blob deletions", err)
		}
		if len(batch) == 0 {
			return n, nil
		}
		ids := make([]int64, len(batch))
		for i, d := range batch {
			if err := s.objects.remove(ctx, d.ObjectKey); err != nil {
				return n, err
			}
			ids[i] = d.ID
		}
		if err := s.db.WithContext(ctx).Where("id IN ?", ids).Delete(&BlobDeletion{}).Error; err != nil {
			return n, wrap("drain blob deletions", err)
		}
		n += len(batch)
	}
}

// orphanObjects walks the objects no blob row names and no upload may
// still be about to name (older than the grace), calling fn with each.
func (s *Store) orphanObjects(ctx context.Context, fn func(key string, size int64) error) error {
	if s.objects == nil {
		return nil
	}
	cutoff := time.Now().Add(-s.objects.cfg.OrphanGrace)
	var keys []string
	sizes := map[string]int64{}
	flush := func() error {
		named, err := s.namedKeys(ctx, keys)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if !named[k] {
				if err := fn(k, sizes[k]); err != nil {
					return err
				}
			}
		}
		keys, sizes = keys[:0], map[string]int64{}
		return nil
	}
	for obj := range s.objects.client.ListObjectsIter(ctx, s.objects.cfg.Bucket, minio.ListObjectsOptions{Prefix: s.objects.root(), Recursive: true}) {
		if obj.Err != nil {
			return objectErr("list blobs", obj.Err)
		}
		if !obj.LastModified.Before(cutoff) {
			continue
		}
		keys = append(keys, obj.Key)
		sizes[obj.Key] = obj.Size
		if len(keys) == deletionChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// countOrphanObjects counts the objects no blob row names (older than
// the grace): there should be none.
func (s *Store) countOrphanObjects(ctx context.Context) (int64, error) {
	var n int64
	err := s.orphanObjects(ctx, func(string, int64) error { n++; return nil })
	return n, err
}

// SweepOrphanObjects deletes the objects no blob row names (older than
// the grace: an upload's, put before its row commits, are younger) and
// says how many went and their bytes.
func (s *Store) SweepOrphanObjects(ctx context.Context) (n, size int64, err error) {
	err = s.orphanObjects(ctx, func(key string, sz int64) error {
		// Named meanwhile? Only a row committed since the listing could,
		// and its objects are younger than the grace: not listed.
		if err := s.objects.remove(ctx, key); err != nil {
			return err
		}
		n, size = n+1, size+sz
		return nil
	})
	return n, size, err
}

// BlobStoreEvery is how often the housekeeping goroutine drains the
// deletion queue when nothing wakes it; orphans are swept every
// OrphanGrace.
const BlobStoreEvery = 10 * time.Second

// BlobHousekeeping drains the deletion queue and sweeps orphan objects at
// once, then drains after each deletion (and every BlobStoreEvery) and
// sweeps every OrphanGrace, until ctx ends. report hears what fails. It
// returns at once without the S3 store.
func (s *Store) BlobHousekeeping(ctx context.Context, report func(op string, err error)) {
	if s.objects == nil {
		return
	}
	drain := func() {
		if _, err := s.DrainBlobDeletions(ctx); err != nil && ctx.Err() == nil {
			report("drain blob deletions", err)
		}
	}
	sweep := func() {
		if _, _, err := s.SweepOrphanObjects(ctx); err != nil && ctx.Err() == nil {
			report("sweep orphan objects", err)
		}
	}
	drain()
	sweep()
	tick := time.NewTicker(BlobStoreEvery)
	defer tick.Stop()
	lastSweep := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.objects.wake:
			// Woken from inside the deleting transaction: its queue rows
			// are there once it commits, a moment later.
			drain()
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			drain()
		case <-tick.C:
			drain()
			if time.Since(lastSweep) >= s.objects.cfg.OrphanGrace {
				sweep()
				lastSweep = time.Now()
			}
		}
	}
}

// watchBlobDeletions wakes the housekeeping goroutine after every GORM
// delete (one may have released blobs, by trigger or cascade).
func (s *Store) watchBlobDeletions() error {
	return s.db.Callback().Delete().After("gorm:delete").Register("palaver:blob-objects", func(tx *gorm.DB) {
		if tx.Error == nil && tx.Statement.RowsAffected > 0 && tx.Statement.Table != "blob_deletions" {
			select {
			case s.objects.wake <- struct{}{}:
			default:
			}
		}
	})
}

// settleAll settles each of a batch's staged blobs.
func (s *Store) settleAll(ctx context.Context, staged map[*NewFile]*stagedBlob, committed bool) {
	for _, b := range staged {
		s.settle(ctx, b, committed)
	}
}
