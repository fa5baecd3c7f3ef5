import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { evolutionInstances } from "../../../db/schema";
import { digitsOf, uniquePhones } from "../../phones/phone";
import { groupIdPattern } from "../group-id";
import { type CreatedGroup, type NewGroup, type ProviderGroup, ProviderOutcomeUnknownError, ProviderSendError, ProviderUnavailableError } from "../provider";
import { evolutionErrorText, EvolutionHttpError, EvolutionUnreachableError } from "./client";
import type { EvolutionContext } from "./context";
import { type CreationOutcome, type GroupCreation, GroupCreations } from "./group-creations";
import type { GroupListings } from "./group-listing";
import { groupError, type Groups, listedOutcomes } from "./groups";
import type { Instances } from "./instances";
import { type EvolutionParticipant, mayBeOurs } from "./jids";

/** Creating a group takes WhatsApp seconds (participants' devices, the metadata): its own, longer time-out. */
const createTimeoutMs = 60_000;

/** Creating a group, never twice (docs/evolution.md#group-creation-that-never-duplicates). */
export class GroupCreator {
  constructor(
    private readonly ctx: EvolutionContext,
    private readonly instances: Instances,
    private readonly listings: GroupListings,
    private readonly groups: Groups,
  ) {}

  /**
   * `POST /group/create` with the admins as participants (Evolution needs at least one) and
   * `promoteParticipants: true`, then the picture (`updateGroupPicture`) and admins-only
   * (`updateSetting` announcement). Never makes a second group for one creation
   * (docs/evolution.md#group-creation-that-never-duplicates): each creation is recorded before the
   * POST (`evolution_group_creations`, by the caller's `key`), and Evolution answers any failure after
   * WhatsApp made the group with the same 500 as one before it, so after every failure but a refusal
   * of the request itself the group is looked up in the channel's listing and adopted when found. A
   * creation of the same name still unsettled on the channel is looked up before another is made. The
   * picture and the setting are best effort: the group exists whatever becomes of them.
   */
  async createGroup(channelId: string, group: NewGroup): Promise<CreatedGroup> {
    const row = await this.groups.openInstance(channelId);
    const subject = group.name.trim();
    if (!subject || subject.length > 100) throw new ProviderSendError("A group's name must have 1 to 100 characters.", false);
    const participants = uniquePhones(group.admins.map(digitsOf).filter((a) => a.length >= 10));
    if (participants.length === 0)
      throw new ProviderSendError("Evolution API creates a group only with at least one participant: give the template an admin.", false);
    // Without the caller's key a creation is its own (never answered again), but still looked up by name.
    const key = group.key ?? `once:${randomUUID()}`;
    const creations = new GroupCreations(this.ctx.db, channelId);
    const own = await creations.get(key);
    if (group.key && own?.state === "made" && own.groupId) return { id_group: own.groupId, name: own.subject, adopted: true };

    // A creation of this name whose outcome is still unknown (a lost answer, a crash) is settled first.
    for (const earlier of await creations.pendingFor(subject, key)) {
      // Another request's POST still under way: its group is its own, and none is made beside it.
      if (earlier.key !== key && earlier.error === null && Date.now() < earlier.settlesAt.getTime())
        throw new ProviderOutcomeUnknownError(`"${subject}" is being created on ${row.instanceName} by another request: no other is made meanwhile.`);
      const rateLimited = /rate-?overlimit/i.test(earlier.error ?? "");
      const outcome = await this.settleCreation(channelId, row.instanceName, earlier).catch((err: Error) => {
        throw new ProviderOutcomeUnknownError(
          `An earlier creation of "${subject}" on ${row.instanceName} may have made the group and cannot be looked up now (${err.message}): no other is made until it is.`,
          { rateLimited },
        );
      });
      if (outcome.kind === "unknown")
        throw new ProviderOutcomeUnknownError(
          `An earlier creation of "${subject}" on ${row.instanceName} is not settled yet (${outcome.reason}): no other is made until it is.`,
          { rateLimited },
        );
      if (outcome.kind === "made") {
        await creations.claim(earlier.key, key);
        console.warn(`[evolution] "${subject}" on ${row.instanceName}: an earlier creation had made ${outcome.groupId}; adopted`);
        return this.finishGroup(channelId, row.instanceName, group, { id: outcome.groupId, subject: earlier.subject }, { adopted: true });
      }
    }

    const startedAt = new Date();
    const createMs = this.ctx.opts.groupCreateTimeoutMs ?? Math.max(this.ctx.opts.timeoutMs, createTimeoutMs);
    // Until the POST ends, a crash leaves it pending: absence is proved only by a listing long after it began.
    if (!(await creations.begin(key, subject, startedAt, new Date(startedAt.getTime() + createMs + this.ctx.reconcileAfterMs))))
      throw new ProviderOutcomeUnknownError(`"${subject}" is being created on ${row.instanceName} by another request: no other is made meanwhile.`);
    let created: { id?: string; subject?: string; owner?: string; ownerPn?: string; participants?: EvolutionParticipant[] } | undefined;
    try {
      created = await this.instances.onInstance(channelId, () =>
        this.ctx.client.request("POST", `/group/create/${encodeURIComponent(row.instanceName)}`, {
          body: { subject, participants, promoteParticipants: true, ...(group.description ? { description: group.description } : {}) },
          // Never repeated: a repeat makes a second group.
          retry: false,
          timeoutMs: createMs,
        }),
      );
    } catch (err) {
      return this.afterFailedCreate(channelId, row.instanceName, group, creations, key, subject, err);
    }
    const id = created?.id;
    if (!id || !groupIdPattern.test(id)) {
      const err = new ProviderSendError(`Evolution API gave no group id creating "${subject}".`, true);
      return this.afterFailedCreate(channelId, row.instanceName, group, creations, key, subject, err);
    }
    await creations.made(key, id);
    // We made it: its creator is us, so a LID there is ours (the gateway never tells our LID otherwise).
    await this.groups.learnOwnLid(channelId, created?.participants ?? [], { creator: created?.owner, creatorPn: created?.ownerPn });
    const made = await this.finishGroup(channelId, row.instanceName, group, { id, subject: created?.subject ?? subject }, {});
    // Who is in it, as the answer lists them: Evolution drops those its WhatsApp check says are not on WhatsApp.
    return Array.isArray(created?.participants) ? { ...made, participants: listedOutcomes(participants, created.participants, created.owner) } : made;
  }

  /**
   * A create that did not answer its group. A refusal of the request itself (400: Evolution's schema
   * check; 401/403/404 and a gateway that never got it or is not activated: guards in front of the
   * handler) made nothing. Anything else — a 5xx ("Error creating group" with WhatsApp's text, a
   * rate-overlimit among them), a time-out, a connection lost after the request went out — may have
   * come after WhatsApp made the group: it is looked up.
   */
  private async afterFailedCreate(
    channelId: string,
    instanceName: string,
    group: NewGroup,
    creations: GroupCreations,
    key: string,
    subject: string,
    err: unknown,
  ): Promise<CreatedGroup> {
    const text = err instanceof EvolutionHttpError ? evolutionErrorText(err.body, err.message) : err instanceof Error ? err.message : String(err);
    const rateLimited = /rate-?overlimit/i.test(text);
    // 503: a proxy with no gateway behind it (LICENSE_REQUIRED is EvolutionNotActivatedError, never sent).
    const notHandled =
      (err instanceof EvolutionUnreachableError && err.notSent) || (err instanceof EvolutionHttpError && (err.status < 500 || err.status === 503));
    if (notHandled) {
      await creations.absent(key, text);
      throw groupError(err, `Evolution API create for "${subject}"`);
    }
    // A 500 is the handler's own answer (WhatsApp is done with it); a lost answer (time-out, reset, a proxy's
    // 502/504) may still be at work on the gateway, so its absence is proved only later.
    const answered = (err instanceof EvolutionHttpError && err.status === 500) || err instanceof ProviderSendError;
    const settlesAt = new Date(Date.now() + (answered ? 0 : this.ctx.reconcileAfterMs));
    const attempt = await creations.failed(key, text, settlesAt);
    let outcome: CreationOutcome;
    try {
      outcome = await this.settleCreation(channelId, instanceName, attempt);
    } catch (lookup) {
      throw new ProviderOutcomeUnknownError(
        `Creating "${subject}" on ${instanceName} failed (${text}) and the group cannot be looked up now (${(lookup as Error).message}): it is looked up again before another is made.`,
        { rateLimited },
      );
    }
    if (outcome.kind === "made") {
      console.warn(`[evolution] creating "${subject}" on ${instanceName} failed (${text}) after WhatsApp made ${outcome.groupId}: adopted`);
      return this.finishGroup(channelId, instanceName, group, { id: outcome.groupId, subject }, { adopted: true, rateLimited });
    }
    if (outcome.kind === "unknown") {
      throw new ProviderOutcomeUnknownError(
        `Creating "${subject}" on ${instanceName}: ${text}; the group is not listed yet (${outcome.reason}), it is looked up again before another is made.`,
        { rateLimited },
      );
    }
    if (rateLimited)
      throw new ProviderSendError(`WhatsApp throttled group creation on ${instanceName} (${text}): no group was made.`, true, { rateLimited: true });
    if (/connection closed|not connected/i.test(text)) throw new ProviderUnavailableError(`Evolution API create for "${subject}": ${text} (no group was made)`);
    throw new ProviderSendError(`Evolution API could not create "${subject}": ${text} (no group was made)`, true);
  }

  /**
   * Is the group of this creation on the channel? Looks in a listing (the one-at-a-time listing of
   * listGroups) that started after the creation began — a new one only when the last is older — for a
   * group of that name created since (WhatsApp's clock may differ a minute), whose creator may be us,
   * not already another creation's. Not found in a listing that started at or after `settlesAt`: the
   * group was not made. Throws when the gateway cannot list now.
   */
  private async settleCreation(channelId: string, instanceName: string, attempt: GroupCreation): Promise<CreationOutcome> {
    const creations = new GroupCreations(this.ctx.db, channelId);
    const settles = attempt.settlesAt.getTime();
    const listing = await this.listings.groupsListedSince(channelId, instanceName, Date.now() >= settles ? settles : attempt.startedAt.getTime());
    const me = await this.groups.ownIds(channelId).catch(() => null);
    const taken = await creations.groupsOfOthers(attempt.key);
    const from = Math.floor(attempt.startedAt.getTime() / 1000) - 60;
    const found = listing.raw
      .filter((g) => g.subject === attempt.subject && typeof g.creation === "number" && g.creation >= from && !taken.has(g.id) && mayBeOurs(g.owner, me))
      .sort((a, b) => (a.creation ?? 0) - (b.creation ?? 0))[0];
    if (found) {
      await creations.made(attempt.key, found.id);
      return { kind: "made", groupId: found.id };
    }
    if (listing.startedAt >= settles) {
      await creations.absent(attempt.key, attempt.error);
      return { kind: "absent" };
    }
    return { kind: "unknown", reason: `the gateway may still be making it until ${attempt.settlesAt.toISOString()}` };
  }

  /** The picture, admins-only and (for a group found after a failure) the description; the cached list gains the group. */
  private async finishGroup(
    channelId: string,
    instanceName: string,
    group: NewGroup,
    made: { id: string; subject: string },
    flags: { adopted?: boolean; rateLimited?: boolean },
  ): Promise<CreatedGroup> {
    const { id } = made;
    // Evolution sets the description inside create, after WhatsApp made the group: a failure may have come first.
    if (flags.adopted && group.description) {
      await this.groups
        .groupCall(channelId, instanceName, "POST", "updateGroupDescription", { groupId: id, body: { description: group.description } })
        .catch((err) => console.warn(`[evolution] could not set the description of ${id}: ${(err as Error).message}`));
    }
    if (group.pictureUrl) {
      await this.groups
        .groupCall(channelId, instanceName, "POST", "updateGroupPicture", { groupId: id, body: { image: group.pictureUrl } })
        .catch((err) => console.warn(`[evolution] could not set the picture of ${id}: ${(err as Error).message}`));
    }
    if (group.adminsOnly) {
      await this.groups
        .groupCall(channelId, instanceName, "POST", "updateSetting", { groupId: id, body: { action: "announcement" }, retry: true })
        .catch((err) => console.warn(`[evolution] could not make ${id} admins-only: ${(err as Error).message}`));
    }
    const listed: ProviderGroup = { id_group: id, name: made.subject, ...(group.adminsOnly ? { adminsOnly: true } : {}) };
    // The cached list gains it at once (a listing is slow): list-groups shows it.
    const cached = (await this.instances.row(channelId)).groups;
    if (cached && !cached.some((g) => g.id_group === id)) {
      await this.ctx.db
        .update(evolutionInstances)
        .set({ groups: [...cached, listed] })
        .where(eq(evolutionInstances.channelId, channelId));
    }
    return { ...listed, ...(flags.adopted ? { adopted: true } : {}), ...(flags.rateLimited ? { rateLimited: true } : {}) };
  }
}
