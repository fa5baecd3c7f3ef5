import { afterEach, describe, expect, it } from "vitest";
import { env, readEnv, validateEnv } from "./env";

describe("environment", () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of ["RATE_LIMIT_API_KEY_PER_MINUTE", "MESSAGING_PROVIDER", "TRUST_PROXY", "WEBHOOK_RETRY_SCHEDULE", "APP_URL"]) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it("refuses a bad value naming the variable, at start and on first read", () => {
    process.env.RATE_LIMIT_API_KEY_PER_MINUTE = "abc";
    expect(() => validateEnv()).toThrow('Invalid environment: RATE_LIMIT_API_KEY_PER_MINUTE must be a positive integer (got "abc")');
    expect(() => env.rateLimit.apiKeyPerMinute).toThrow('Invalid environment: RATE_LIMIT_API_KEY_PER_MINUTE must be a positive integer (got "abc")');
  });

  it("names every bad variable at once", () => {
    expect(() => validateEnv({ TRUST_PROXY: "-1", MESSAGING_PROVIDER: "whatsapp", WEBHOOK_RETRY_SCHEDULE: "5000,soon" })).toThrow(
      'Invalid environment: MESSAGING_PROVIDER must be simulator or evolution (got "whatsapp"); ' +
        'WEBHOOK_RETRY_SCHEDULE must be comma-separated milliseconds (non-negative integers) (got "5000,soon"); ' +
        'TRUST_PROXY must be a non-negative integer (got "-1")',
    );
  });

  it("reads live: defaults when unset or empty, the new value after a change", () => {
    delete process.env.RATE_LIMIT_API_KEY_PER_MINUTE;
    expect(env.rateLimit.apiKeyPerMinute).toBe(300);
    process.env.RATE_LIMIT_API_KEY_PER_MINUTE = "";
    expect(env.rateLimit.apiKeyPerMinute).toBe(300);
    process.env.RATE_LIMIT_API_KEY_PER_MINUTE = " 5 ";
    expect(env.rateLimit.apiKeyPerMinute).toBe(5);
    process.env.WEBHOOK_RETRY_SCHEDULE = "10, 20";
    expect(env.webhooks.retrySchedule).toEqual([10, 20]);
    process.env.APP_URL = "https://campaigns.example.com/";
    expect(env.appUrl).toBe("https://campaigns.example.com");
    expect(readEnv("MESSAGING_PROVIDER")).toBeUndefined();
  });
});
