// The minio-go v7 library (Debian: golang-github-minio-minio-go-v7-dev)
// against the S3 port, as test/clients/languages.clients.ts runs it:
// built and run as `minio-go <host:port> <bucket>` with AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY set, built offline in GOPATH mode. It makes and
// removes a bucket, puts a small object with metadata and a 21 MiB one in
// 5 MiB parts, reads them whole and by range, composes an object from a
// part-sized range of one and the whole of another (UploadPartCopy),
// copies, lists (v2 and v1), deletes in bulk, and prints what it saw.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"os"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func check(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	endpoint, bucket := os.Args[1], os.Args[2]
	ctx := context.Background()
	c, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""), Secure: false, Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	check(err, "new")
	ok, err := c.BucketExists(ctx, bucket)
	check(err, "bucket exists")
	fmt.Println("bucket exists:", ok)
	check(c.MakeBucket(ctx, "minio-made", minio.MakeBucketOptions{}), "make bucket")
	_, err = c.PutObject(ctx, bucket, "minio/small.txt", bytes.NewReader([]byte("hello minio")), 11, minio.PutObjectOptions{ContentType: "text/plain", UserMetadata: map[string]string{"from": "minio-go"}})
	check(err, "put small")
	big := make([]byte, 21*1024*1024)
	rand.Read(big)
	info, err := c.PutObject(ctx, bucket, "minio/big.bin", bytes.NewReader(big), int64(len(big)), minio.PutObjectOptions{PartSize: 5 * 1024 * 1024})
	check(err, "put big")
	fmt.Println("big etag:", info.ETag)
	st, err := c.StatObject(ctx, bucket, "minio/small.txt", minio.StatObjectOptions{})
	check(err, "stat")
	fmt.Println("stat:", st.Size, st.ContentType, st.UserMetadata["From"])
	obj, err := c.GetObject(ctx, bucket, "minio/big.bin", minio.GetObjectOptions{})
	check(err, "get")
	got, err := io.ReadAll(obj)
	check(err, "read")
	fmt.Println("big same:", sha256.Sum256(got) == sha256.Sum256(big))
	ranged := minio.GetObjectOptions{}
	check(ranged.SetRange(5, 9), "range")
	robj, err := c.GetObject(ctx, bucket, "minio/small.txt", ranged)
	check(err, "get range")
	rb, err := io.ReadAll(robj)
	check(err, "read range")
	fmt.Printf("range: %q\n", rb)
	// ComposeObject: UploadPartCopy with source ranges.
	src1 := minio.CopySrcOptions{Bucket: bucket, Object: "minio/big.bin", MatchRange: true, Start: 0, End: 5*1024*1024 - 1}
	src2 := minio.CopySrcOptions{Bucket: bucket, Object: "minio/small.txt"}
	_, err = c.ComposeObject(ctx, minio.CopyDestOptions{Bucket: bucket, Object: "minio/composed.bin"}, src1, src2)
	check(err, "compose")
	cobj, err := c.GetObject(ctx, bucket, "minio/composed.bin", minio.GetObjectOptions{})
	check(err, "get composed")
	cb, err := io.ReadAll(cobj)
	check(err, "read composed")
	fmt.Println("composed same:", bytes.Equal(cb, append(append([]byte{}, big[:5*1024*1024]...), []byte("hello minio")...)))
	_, err = c.CopyObject(ctx, minio.CopyDestOptions{Bucket: bucket, Object: "minio/copy.txt"}, minio.CopySrcOptions{Bucket: bucket, Object: "minio/small.txt"})
	check(err, "copy")
	n := 0
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: "minio/", Recursive: true}) {
		check(o.Err, "list")
		fmt.Println("listed:", o.Key, o.Size)
		n++
	}
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: "minio/", Recursive: false, WithMetadata: false, UseV1: true}) {
		check(o.Err, "list v1")
	}
	objs := make(chan minio.ObjectInfo)
	go func() {
		defer close(objs)
		for _, k := range []string{"minio/small.txt", "minio/big.bin", "minio/composed.bin", "minio/copy.txt"} {
			objs <- minio.ObjectInfo{Key: k}
		}
	}()
	for e := range c.RemoveObjects(ctx, bucket, objs, minio.RemoveObjectsOptions{}) {
		check(e.Err, "remove "+e.ObjectName)
	}
	left := 0
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: "minio/", Recursive: true}) {
		check(o.Err, "list after")
		left++
	}
	fmt.Println("left after remove:", left)
	check(c.RemoveBucket(ctx, "minio-made"), "remove bucket")
	fmt.Println("OK")
}
