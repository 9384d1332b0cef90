#!/bin/sh
# Installs the S3 clients `npm run test:clients` drives, from Debian's packages:
# awscli (aws), rclone, s3cmd, python3-boto3, restic, duplicity (its boto3
# backend uses python3-boto3), the minio-go library
# with the Go toolchain that builds it (golang-go,
# golang-github-minio-minio-go-v7-dev), Ruby's aws-sdk-s3 (ruby-aws-sdk-s3)
# and Perl's Net::Amazon::S3 (libnet-amazon-s3-perl). Run as root (or with sudo).
# Then the `minio` npm package, beside the project rather than as one of its
# dependencies, in FSBUCKET_CLIENTS_NPM (default ~/.cache/fsbucket-clients),
# where test/clients/languages.clients.ts looks for it.
set -eu
packages="awscli rclone s3cmd python3-boto3 restic duplicity golang-go golang-github-minio-minio-go-v7-dev ruby-aws-sdk-s3 libnet-amazon-s3-perl"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-clients: apt-get not found; install these with your package manager: $packages" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $packages
prefix="${FSBUCKET_CLIENTS_NPM:-$HOME/.cache/fsbucket-clients}"
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund minio@8
