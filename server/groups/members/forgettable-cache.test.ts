import { describe, expect, it } from "vitest";
import { ForgettableCache } from "./forgettable-cache";

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

// Each test its own slot's contents: forget the owner first (the slot is process-wide).
const fresh = (owner: string) => {
  const cache = new ForgettableCache<string>("groupAdmins", 100);
  cache.forget(owner);
  return cache;
};

describe("ForgettableCache", () => {
  it("concurrent misses of one key share one read, and its answer is kept", async () => {
    const cache = fresh("o1");
    const read = deferred<string>();
    let reads = 0;
    const load = () => {
      reads++;
      return read.promise;
    };
    const answers = Promise.all([1, 2, 3].map(() => cache.get("o1", "k", load, () => 60_000)));
    read.resolve("admins");
    expect(await answers).toEqual(["admins", "admins", "admins"]);
    expect(await cache.get("o1", "k", load, () => 60_000)).toBe("admins");
    expect(reads).toBe(1);
  });

  it("a failed read is not kept: the next call reads again", async () => {
    const cache = fresh("o2");
    let reads = 0;
    const failing = () => {
      reads++;
      return Promise.reject(new Error("gateway down"));
    };
    await expect(Promise.all([cache.get("o2", "k", failing, () => 60_000), cache.get("o2", "k", failing, () => 60_000)])).rejects.toThrow("gateway down");
    expect(reads).toBe(1);
    expect(
      await cache.get(
        "o2",
        "k",
        async () => "later",
        () => 60_000,
      ),
    ).toBe("later");
  });

  it("after forget, a caller reads again instead of joining the older read, whose answer is not kept", async () => {
    const cache = fresh("o3");
    const older = deferred<string>();
    const first = cache.get(
      "o3",
      "k",
      () => older.promise,
      () => 60_000,
    );
    cache.forget("o3");
    const second = cache.get(
      "o3",
      "k",
      async () => "newer",
      () => 60_000,
    );
    older.resolve("older");
    expect(await first).toBe("older");
    expect(await second).toBe("newer");
    expect(
      await cache.get(
        "o3",
        "k",
        async () => "unused",
        () => 60_000,
      ),
    ).toBe("newer");
  });
});
