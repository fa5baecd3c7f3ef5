import { type MemberRole, memberRoles } from "../../db/schema";

/** Whether `role` is at least `least` (viewer < editor < admin < owner; docs/team.md#roles). */
export const roleAtLeast = (role: MemberRole, least: MemberRole) => memberRoles.indexOf(role) >= memberRoles.indexOf(least);
