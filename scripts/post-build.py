#!/usr/bin/env python3
"""Trunk post_build hook: finishes dist/ for offline use and a strict Content-Security-Policy.

* first-bar/: the first bar's small module (scripts/build-first-bar.sh), first, so the precache
  list and the content version below include it;
* snapshot/ and plan/: the page's two workers and their modules (scripts/build-worker.sh), loaded
  when a snapshot is dropped on the page or vramfit's run exported as one, and when the plan view
  opens;
* sw.js: the precache list (every file of the build) and a version made from their content, so a
  new build gets a new cache and no list is kept by hand;
* index.html: Trunk's loader waits for the first bar (public/first-bar.js) before it fetches the
  page's module, and the page's module is not preloaded: on a slow network the first bar's small
  module would otherwise share the bandwidth with one three times its size;
* index.html: the language files the build has, for the first bar's early fetch;
* first-bar/{lang}.txt: each language's few words of the first bar, the file that fetch takes;
* index.html: the sha256 of Trunk's inline loader script in the CSP, so script-src needs no
  'unsafe-inline'.
Reads Trunk's $TRUNK_STAGING_DIR (the build before it replaces dist/).
* manifest.{lang}.webmanifest: the manifest with each language's name and description (from
  i18n/{lang}.txt), which the page links while it is shown in that language.
"""
import base64
import json
import hashlib
import os
import re
import subprocess
import sys

staging = os.environ.get('TRUNK_STAGING_DIR') or (sys.argv[1] if len(sys.argv) > 1 else None)
if not staging:
    sys.exit('post-build: TRUNK_STAGING_DIR is not set')

def read_language(path):
    """The `key = value` lines of a language file (values unescaped)."""
    out = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line.strip() or line.lstrip().startswith('#') or ' = ' not in line:
                continue
            key, value = line.split(' = ', 1)
            out[key.strip()] = value.replace('\\n', '\n').replace('\\\\', '\\')
    return out


subprocess.run(['bash', os.path.join(os.path.dirname(__file__), 'build-first-bar.sh')], check=True)
for worker in ('snapshot', 'plan'):
    subprocess.run(['bash', os.path.join(os.path.dirname(__file__), 'build-worker.sh'), worker], check=True)

# each language's words of the first bar (the keys crates/first-bar/build.rs checks against
# BarWords), as the lines of its file: what the first bar fetches instead of the whole file
with open(os.path.join(os.path.dirname(__file__), '..', 'crates', 'first-bar', 'bar-words.keys'), encoding='utf-8') as f:
    bar_keys = [l.strip() for l in f if l.strip() and not l.lstrip().startswith('#')]

with open(os.path.join(staging, 'manifest.webmanifest'), encoding='utf-8') as f:
    manifest = json.load(f)
i18n_dir = os.path.join(staging, 'i18n')
if not os.path.isdir(i18n_dir):
    sys.exit('post-build: dist has no i18n/ (index.html must copy it)')
for name in sorted(os.listdir(i18n_dir)):
    if not name.endswith('.txt'):
        continue
    with open(os.path.join(i18n_dir, name), encoding='utf-8') as f:
        bar_lines = [l for l in f if ' = ' in l and l.split(' = ', 1)[0].strip() in bar_keys]
    if len(bar_lines) != len(bar_keys):
        sys.exit('post-build: i18n/%s lacks some of the first bar\'s words' % name)
    # English's are compiled into the module
    if name != 'en.txt':
        with open(os.path.join(staging, 'first-bar', name), 'w', encoding='utf-8') as f:
            f.writelines(bar_lines)
    strings = read_language(os.path.join(i18n_dir, name))
    localized = dict(manifest, lang=strings['lang'], name=strings['page_title'],
                     description=strings['manifest_description'])
    with open(os.path.join(staging, 'manifest.%s.webmanifest' % strings['lang']), 'w', encoding='utf-8') as f:
        json.dump(localized, f, ensure_ascii=False, indent=2)

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
# Trunk's loader imports the page's glue at once and fetches its module: both wait for the first
# bar now, and neither is preloaded
page_preloads = r'<link rel="(?:preload|modulepreload)" href="\./vramfit-web-[^"]*"[^>]*>'
if len(re.findall(page_preloads, index)) != 2:
    sys.exit("post-build: index.html should hold Trunk's two preloads of the page (its glue and its wasm)")
index = re.sub(page_preloads, '', index)
glue_import = re.search(r"import init, \* as bindings from '(\./vramfit-web-[^']*\.js)';", index)
if not glue_import or index.count('const wasm = await init(') != 1:
    sys.exit("post-build: Trunk's loader has changed (no single glue import and init call)")
index = index.replace(glue_import.group(0), (
    'await window.vramfitFirstBar;\n'
    "const bindings = await import('%s');\n"
    'const init = bindings.default;' % glue_import.group(1)))
inline = re.findall(r'<script(?![^>]*\ssrc=)[^>]*>(.*?)</script>', index, flags=re.S)
hashes = ' '.join(
    "'sha256-%s'" % base64.b64encode(hashlib.sha256(body.encode('utf-8')).digest()).decode() for body in inline
)
languages = sorted(n[:-len('.txt')] for n in os.listdir(i18n_dir) if n.endswith('.txt'))
if '__LANGUAGES__' not in index:
    sys.exit('post-build: index.html has no __LANGUAGES__ placeholder (the first bar\'s early fetch)')
index = index.replace('__LANGUAGES__', ' '.join(languages))
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
