import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { eventBody, eventTypes, type EventType } from "../../server/webhooks/events";

const page = readFileSync(path.resolve(__dirname, "../../docs/webhooks.md"), "utf8");

/** The JSON values of a text holding several one after the other (a ```json block of docs/webhooks.md). */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") {
      if (depth++ === 0) start = i;
    } else if (c === "}" && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
  }
  return values;
}

const examples = [...page.matchAll(/```json\n([\s\S]*?)```/g)].flatMap((m) => jsonValues(m[1])) as { type: EventType; data: { event?: string } }[];

describe("docs/webhooks.md's payload examples", () => {
  it("each parses with its event type's schema (server/webhooks/events.ts), no field more or less", () => {
    for (const example of examples) {
      expect(eventTypes, JSON.stringify(example)).toContain(example.type);
      const parsed = eventBody(example.type).safeParse(example);
      expect(parsed.error?.issues, JSON.stringify(example)).toBeUndefined();
      expect(parsed.data).toEqual(example);
    }
  });

  it("show every event type and every group_activity event", () => {
    expect(new Set(examples.map((e) => e.type))).toEqual(new Set(eventTypes));
    const activity = examples.filter((e) => e.type === "group_activity").map((e) => e.data.event);
    expect(activity.sort()).toEqual([
      "buyer_removed",
      "group_action",
      "group_created",
      "group_full",
      "link_broken",
      "members_changed",
      "moderation",
      "purchase",
      "traffic_alert",
    ]);
  });
});
