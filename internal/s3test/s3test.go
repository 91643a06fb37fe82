// Package s3test runs a real S3-compatible server for the tests of the S3
// blob store: Versity's S3 gateway (versitygw), built from the module
// proxy by the Makefile (tools/s3server) and named by PALAVER_TEST_S3_SERVER,
// serving a temporary folder on a free loopback port.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Env names the server binary. make test builds it and sets it; unset,
// the tests that need it skip and say so (as those of PostgreSQL do).
const Env = "PALAVER_TEST_S3_SERVER"

// Access and secret keys of the server's root account.
const (
	AccessKey = "root-access-key"
	SecretKey = "root-secret-key-of-the-test"
)

// Server is one running S3 server with one empty bucket.
type Server struct {
	Endpoint string // 127.0.0.1:PORT
	Bucket   string
	Dir      string // the folder it serves: Dir/Bucket/KEY are the objects
	Client   *minio.Client
	cmd      *exec.Cmd
	done     chan error
	t        testing.TB
}

// Start starts a server for the test, which stops it when it ends. The
// test skips when PALAVER_TEST_S3_SERVER is unset, and fails when the
// binary it names does not run.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(Env)
	if bin == "" {
		t.Skipf("set %s to a versitygw binary (make test builds one into bin/) to run this test", Env)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	dir := t.TempDir()
	s := &Server{Bucket: "palaver-test", Dir: filepath.Join(dir, "root"), t: t}
	if err := os.Mkdir(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A port taken by something else between the probe and the start
	// makes the server exit: try another.
	var err error
	for range 3 {
		if err = s.start(bin, filepath.Join(dir, "server.log")); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(s.Stop)
	if err := s.Client.MakeBucket(context.Background(), s.Bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	return s
}

func (s *Server) start(bin, logPath string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.Endpoint = ln.Addr().String()
	ln.Close()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--port", s.Endpoint, "posix", s.Dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.done = cmd, make(chan error, 1)
	go func() { s.done <- cmd.Wait() }()
	s.Client, err = minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""),
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	if err != nil {
		s.Stop()
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-s.done:
			s.done <- err
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("exited (%v): %s", err, log)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := s.Client.ListBuckets(ctx)
		cancel()
		if err == nil {
			return nil
		}
	}
	s.Stop()
	return errors.New("not answering after 30 s")
}

// Stop stops the server (a test of the store being down calls it early).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.done <- nil
	s.cmd.Process = nil
}

// URL is the --blob-store value for the server's bucket.
func (s *Server) URL() string {
	return "s3://" + s.Bucket + "?endpoint=" + s.Endpoint + "&secure=false&path_style=true"
}

// Env is the environment the blob store reads its credentials from.
func (s *Server) Env(name string) string {
	switch name {
	case "PALAVER_S3_ACCESS_KEY":
		return AccessKey
	case "PALAVER_S3_SECRET_KEY":
		return SecretKey
	}
	return ""
}

// Keys lists the bucket's objects (through S3), sorted.
func (s *Server) Keys(t testing.TB) []string {
	t.Helper()
	var out []string
	for obj := range s.Client.ListObjectsIter(context.Background(), s.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatalf("list objects: %v", obj.Err)
		}
		if !strings.HasSuffix(obj.Key, "/") {
			out = append(out, obj.Key)
		}
	}
	sort.Strings(out)
	return out
}

// Files lists the files under the bucket's folder on disk, as keys.
func (s *Server) Files(t testing.TB) []string {
	t.Helper()
	root := filepath.Join(s.Dir, s.Bucket)
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
