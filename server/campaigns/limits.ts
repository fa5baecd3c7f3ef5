/**
 * The size limits of a campaign body: the zod schemas (schema.ts) check them and the dashboard's
 * composer (app/(dashboard)/campaigns/new/) bounds its inputs with them. It imports nothing, so the
 * browser bundle can take it.
 */
export const campaignLimits = {
  /** WhatsApp's limit for a text message (docs/decisions.md#campaign-bodies). */
  message: 65_536,
  fileName: 255,
  carousel: {
    message: 4096,
    minCards: 1,
    maxCards: 4,
    buttonsPerCard: 2,
    buttonLabel: 25,
    cardText: 1024,
  },
  /** WhatsApp's poll: a question, 2 to 12 distinct options (docs/polls.md). */
  poll: {
    question: 255,
    option: 100,
    minOptions: 2,
    maxOptions: 12,
  },
} as const;
