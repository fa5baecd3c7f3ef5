/** Rows of a tenant's webhook history at chosen ages, for the retention tests (prune and the maintenance job). */
export function webhookHistoryRows(tenantId: string, payloadAt: Date) {
  const payload = { type: "campaign_progress", timestamp: payloadAt.toISOString(), data: {} };
  return {
    /** An outbox event created at `at`, fanned out then or (`fannedOut: false`) never. */
    event: (at: Date, fannedOut = true) => ({ tenantId, type: "campaign_progress" as const, payload, createdAt: at, fannedOutAt: fannedOut ? at : null }),
    /** A delivery of `eventId` created at `createdAt`, finished at `finishedAt` (null: still pending). */
    delivery: (eventId: number, state: "pending" | "delivered" | "failed", createdAt: Date, finishedAt: Date | null) => ({
      tenantId,
      eventId,
      type: "campaign_progress" as const,
      orderingKey: `k-${eventId}`,
      messageId: `msg_${eventId}`,
      payload,
      state,
      nextAttemptAt: createdAt,
      createdAt,
      finishedAt,
    }),
    /** An attempt of a delivery, or a test send (`deliveryId` null), made at `at`. */
    attempt: (deliveryId: number | null, at: Date) => ({
      tenantId,
      deliveryId,
      type: "campaign_progress",
      url: "https://example.com/h",
      isTest: deliveryId === null,
      attemptedAt: at,
      status: 200,
      durationMs: 5,
    }),
  };
}
