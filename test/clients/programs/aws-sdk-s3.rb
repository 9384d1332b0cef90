# Ruby's aws-sdk-s3 (Debian: ruby-aws-sdk-s3) against the S3 port, as
# test/clients/languages.clients.ts runs it:
# `ruby aws-sdk-s3.rb <endpoint> <bucket> <scratch file>` with
# AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set. It puts and gets an object
# with metadata, uploads 13 MiB with upload_file in 5 MiB parts, reads it
# back whole and part 2 by partNumber, lists, deletes in bulk.
require 'aws-sdk-s3'
require 'digest'
endpoint, bucket = ARGV
s3 = Aws::S3::Client.new(endpoint: endpoint, region: 'us-east-1', force_path_style: true,
  access_key_id: ENV['AWS_ACCESS_KEY_ID'], secret_access_key: ENV['AWS_SECRET_ACCESS_KEY'])
s3.put_object(bucket: bucket, key: 'ruby/small.txt', body: 'hello ruby', content_type: 'text/plain', metadata: { 'from' => 'ruby' })
got = s3.get_object(bucket: bucket, key: 'ruby/small.txt')
puts "get: #{got.body.read} #{got.content_type} #{got.metadata}"
big = Random.new(1).bytes(13 * 1024 * 1024)
File.binwrite(ARGV[2], big)
obj = Aws::S3::Resource.new(client: s3).bucket(bucket).object('ruby/big.bin')
obj.upload_file(ARGV[2], multipart_threshold: 5 * 1024 * 1024)
head = s3.head_object(bucket: bucket, key: 'ruby/big.bin')
puts "big etag: #{head.etag} size #{head.content_length}"
back = s3.get_object(bucket: bucket, key: 'ruby/big.bin').body.read
puts "big same: #{Digest::SHA256.digest(back) == Digest::SHA256.digest(big)}"
part = s3.get_object(bucket: bucket, key: 'ruby/big.bin', part_number: 2)
puts "part 2: #{part.content_length} #{part.parts_count} #{part.content_range}"
listed = s3.list_objects_v2(bucket: bucket, prefix: 'ruby/').contents.map(&:key)
puts "listed: #{listed}"
s3.delete_objects(bucket: bucket, delete: { objects: listed.map { |k| { key: k } } })
puts "left: #{s3.list_objects_v2(bucket: bucket, prefix: 'ruby/').key_count}"
puts 'OK'
