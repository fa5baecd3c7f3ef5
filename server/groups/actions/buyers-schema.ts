import { z } from "zod";
import { idLaunch } from "../../launches/launch/schema";

export const launchBuyersInput = z.object({ id_launch: idLaunch });

export const buyerInGroup = z.object({
  participant: z.string().meta({ description: "The id the group lists them by: a phone number or the platform's opaque id (…@lid)." }),
  id_group: z.string(),
  group_name: z.string(),
  platform: z.string().meta({ description: "The marketplace of the purchase that made them a buyer (hotmart, kiwify)." }),
  transaction: z.string().meta({ description: "That purchase's transaction id." }),
  removal: z
    .enum(["pending", "failed"])
    .nullable()
    .meta({
      description:
        "Their removal from this group: pending (queued or being made), failed (the platform refused it or no admin number could act: " +
        "remove-buyers queues it again), null (never asked: remove_from_groups off, dry_run, or the purchase arrived before they joined).",
    }),
});

export const launchBuyersOutput = z.object({ success: z.literal(true), buyers: z.array(buyerInGroup) });

export const removeBuyersOutput = z.object({
  success: z.literal(true),
  id_action: z.array(z.string()).meta({ description: "The group actions made (type remove; at most 200 people each); empty when nobody was left to remove." }),
  removals: z.number().int().meta({ description: "People × groups queued for removal." }),
});
