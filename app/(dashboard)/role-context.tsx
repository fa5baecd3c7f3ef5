"use client";

import { createContext, type ReactNode, useContext } from "react";

type Role = "owner" | "admin" | "editor" | "viewer";
const order: Role[] = ["viewer", "editor", "admin", "owner"];

interface SessionRole {
  userId: string;
  role: Role;
}

const RoleContext = createContext<SessionRole>({ userId: "", role: "viewer" });

/** The signed-in member's role in the session's account, for pages to hide what it cannot do (the server holds the rules). */
export function RoleProvider({ value, children }: { value: SessionRole; children: ReactNode }) {
  return <RoleContext.Provider value={value}>{children}</RoleContext.Provider>;
}

export const useSessionRole = () => useContext(RoleContext);

/** Whether the session's role is at least `least` (docs/team.md#roles). */
export function useCan(least: Role): boolean {
  const { role } = useSessionRole();
  return order.indexOf(role) >= order.indexOf(least);
}
