#!/usr/bin/env python3
"""Trunk post_build hook: finishes dist/ for offline use and a strict Content-Security-Policy.

* sw.js: the precache list (every file of the build) and a version made from their content, so a
  new build gets a new cache and no list is kept by hand;
* index.html: the sha256 of Trunk's inline loader script in the CSP, so script-src needs no
  'unsafe-inline'.
Reads Trunk's $TRUNK_STAGING_DIR (the build before it replaces dist/).
"""
import base64
import hashlib
import os
import re
import sys

staging = os.environ.get('TRUNK_STAGING_DIR') or (sys.argv[1] if len(sys.argv) > 1 else None)
if not staging:
    sys.exit('post-build: TRUNK_STAGING_DIR is not set')

files = []
for root, _, names in os.walk(staging):
    for n in names:
        rel = os.path.relpath(os.path.join(root, n), staging).replace(os.sep, '/')
        if rel not in ('sw.js', '404.html'):
            files.append(rel)
files.sort()

digest = hashlib.sha256()
for rel in files:
    with open(os.path.join(staging, rel), 'rb') as f:
        digest.update(rel.encode() + b'\0' + f.read())
version = digest.hexdigest()[:16]

index_path = os.path.join(staging, 'index.html')
with open(index_path, encoding='utf-8') as f:
    index = f.read()
inline = re.findall(r'<script(?![^>]*\ssrc=)[^>]*>(.*?)</script>', index, flags=re.S)
hashes = ' '.join(
    "'sha256-%s'" % base64.b64encode(hashlib.sha256(body.encode('utf-8')).digest()).decode() for body in inline
)
if '__SCRIPT_HASHES__' not in index:
    sys.exit('post-build: index.html has no __SCRIPT_HASHES__ placeholder in its CSP')
index = index.replace('__SCRIPT_HASHES__', hashes)
with open(index_path, 'w', encoding='utf-8') as f:
    f.write(index)

precache = ['./'] + ['./' + rel for rel in files]
sw_path = os.path.join(staging, 'sw.js')
with open(sw_path, encoding='utf-8') as f:
    sw = f.read()
sw = sw.replace('__VERSION__', version).replace('__PRECACHE__', repr(precache).replace("'", '"'))
with open(sw_path, 'w', encoding='utf-8') as f:
    f.write(sw)
print(f'post-build: {len(precache)} files precached, version {version}, {len(inline)} inline script(s) hashed')
