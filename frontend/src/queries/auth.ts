import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";

export async function login(email: string, password: string) {
  return unwrap(await api.POST("/api/v1/auth/login", { body: { email, password } }));
}

export const meQuery = () =>
  queryOptions({
    queryKey: ["auth", "me"],
    queryFn: async () => unwrap(await api.GET("/api/v1/auth/me")),
    staleTime: 60_000,
  });
