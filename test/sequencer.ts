import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds the longest files' tests took, one run each on a loaded 2-core machine (docs/testing.md#the-suites-wall-time):
 * only their order matters. Vitest starts the longest files first when it has their durations from an earlier
 * run; a fresh clone (CI's first run) has none, and vitest would order by file size, starting a short file
 * with a long wait (a paced campaign) last, where it alone sets the end of the run.
 */
const expectedSeconds: Record<string, number> = {
  "test/fuzz/openapi-fuzz.test.ts": 210,
  "test/cli/admin.test.ts": 105,
  "test/auth/sign-in.test.ts": 100,
  "test/api/evolution-reconnect.test.ts": 72,
  "test/faults/data-dir.test.ts": 70,
  "test/api/evolution.test.ts": 65,
  "test/api/campaign-eta.test.ts": 62,
  "test/dispatch/fairness.test.ts": 58,
  "test/webhooks/delivery.test.ts": 43,
  "test/dispatch/runner-agenda.test.ts": 38,
  "test/faults/webhook-receiver-down.test.ts": 29,
  "test/scale/fairness.test.ts": 28,
  "test/webhooks/partner-webhooks.test.ts": 22,
  "test/dispatch/campaign-lease.test.ts": 18,
  "test/api/number-rate-limit.test.ts": 17,
};

/** Longest first: the duration vitest recorded in an earlier run, else the expected one above, else 0; then larger files first. */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const file = (f: TestSpecification) => path.relative(this.ctx.config.root, f.moduleId);
    // The key vitest's own BaseSequencer reads its results cache with.
    const key = (f: TestSpecification) => `${f.project.name}:${file(f)}`;
    const duration = (f: TestSpecification) => cache.getFileTestResults(key(f))?.duration ?? (expectedSeconds[file(f)] ?? 0) * 1000;
    const size = (f: TestSpecification) => cache.getFileStats(key(f))?.size ?? 0;
    return [...files].sort((a, b) => duration(b) - duration(a) || size(b) - size(a));
  }
}
