import { z } from "zod";
import { memberRoles } from "../../db/schema";
import { name } from "../text";
import { passwordMaxLength, passwordMinLength } from "../text-limits";

export const memberRole = z.enum(memberRoles);

export const inviteMemberInput = z.object({
  email: z.email("must be an email address").max(254, "must be at most 254 characters"),
  role: memberRole,
});

/** The invitation link's token (43 base64url characters). */
export const invitationToken = z
  .string()
  .min(20, "is not an invitation link")
  .max(100, "is not an invitation link")
  .regex(/^[A-Za-z0-9_-]+$/, "is not an invitation link");

export const changeRoleInput = z.object({ userId: z.string().min(1).max(100), role: memberRole });
export const removeMemberInput = z.object({ userId: z.string().min(1).max(100) });
export const revokeInvitationInput = z.object({ id: z.string().min(1).max(100) });
export const switchAccountInput = z.object({ tenantId: z.string().min(1).max(100) });

export const signUpWithInvitationInput = z.object({
  token: invitationToken,
  name: name(),
  password: z
    .string()
    .min(passwordMinLength, `must have at least ${passwordMinLength} characters`)
    .max(passwordMaxLength, `must be at most ${passwordMaxLength} characters`),
});
