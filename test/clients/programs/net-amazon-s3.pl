# Perl's Net::Amazon::S3 (Debian: libnet-amazon-s3-perl) against the S3
# port, as test/clients/languages.clients.ts runs it:
# `perl net-amazon-s3.pl <host:port> <bucket> <file>` with AWS_ACCESS_KEY_ID
# and AWS_SECRET_ACCESS_KEY set, signing with SigV4 and path-style URLs. It
# puts and gets an object with metadata, puts a file, heads it, lists
# (ListObjects v1), deletes each key, lists the buckets. Multipart is left
# out: 0.991's Client::Object::put_part passes its request attributes the
# request class refuses, whatever the server.
use strict;
use warnings;
use Net::Amazon::S3;
use Digest::SHA qw(sha256_hex);
my ($host, $bucket_name, $bigfile) = @ARGV;
my $s3 = Net::Amazon::S3->new(
  aws_access_key_id => $ENV{AWS_ACCESS_KEY_ID}, aws_secret_access_key => $ENV{AWS_SECRET_ACCESS_KEY},
  host => $host, secure => 0, retry => 0, authorization_method => 'Net::Amazon::S3::Signature::V4',
  use_virtual_host => 0,
);
my $bucket = $s3->bucket($bucket_name);
$bucket->add_key('perl/small.txt', 'hello perl', { content_type => 'text/plain', 'x-amz-meta-from' => 'perl' }) or die 'add_key: ' . $s3->errstr;
my $got = $bucket->get_key('perl/small.txt') or die 'get_key: ' . $s3->errstr;
print "get: $got->{value} $got->{content_type}\n";
$bucket->add_key_filename('perl/big.bin', $bigfile, {}) or die 'add_key_filename: ' . $s3->errstr;
my $head = $bucket->head_key('perl/big.bin') or die 'head: ' . $s3->errstr;
print "big etag: $head->{etag} size $head->{content_length}\n";
# Multipart: initiate, two parts, complete.
my $list = $bucket->list_all({ prefix => 'perl/' }) or die 'list: ' . $s3->errstr;
print 'listed: ', join(' ', map { "$_->{key}:$_->{size}" } @{ $list->{keys} }), "\n";
$bucket->delete_key($_->{key}) or die 'delete: ' . $s3->errstr for @{ $list->{keys} };
my $after = $bucket->list_all({ prefix => 'perl/' });
print 'left: ', scalar @{ $after->{keys} }, "\n";
my $all = $s3->buckets or die 'buckets: ' . $s3->errstr;
print 'buckets: ', join(' ', map { $_->bucket } @{ $all->{buckets} }), "\n";
print "OK\n";
