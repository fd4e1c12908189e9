// How a TypeScript user calls the package: checked by `tsc --strict` against the package's own
// types (node.test.mjs runs it). A wrong field name or a missing argument here fails the test.
import { analyze, rankFixes, readOom, gpus, defaults } from "vramfit";
import type { Analysis, Fix, VramfitError } from "vramfit";

const run: Analysis = analyze({ batch_size: 8, compile: false }, "rtx3060");
const gib: number = run.peak_bytes.overall / 2 ** 30;
const fits: boolean = run.verdict.fits && run.verdict.risk !== "oom";
const params: number = run.components_bytes.params + run.components_bytes.optimizer;
const onDefaultCard: Analysis = analyze({ program: "nanochat", depth: 12 });
const onCustomCard: Analysis = analyze({ program: "nanochat", depth: 12 }, { gpu: "custom", vram_gib: 16 });
const fixes: Fix[] = rankFixes({ program: "build-nanogpt", B: 16 }, { gpu: "rtx4090", other_gib: 0.5 });
const first: string | undefined = fixes[0]?.edits?.[0];
const asked: number | null = readOom("CUDA out of memory. Tried to allocate 2.00 GiB").tried_to_allocate_bytes;
const cards: string[] = gpus().map((g) => `${g.name}: ${g.total_bytes}`);
const B = defaults("build-nanogpt")["B"];
try {
  analyze({ batch_size: 0 });
} catch (e) {
  const field: string | null = (e as VramfitError).field;
  console.log(field);
}
console.log(gib, fits, params, onDefaultCard.verdict.need_bytes, onCustomCard.gpu.id, first, asked, cards, B);
