"""UsersCount: ``GET /2/users/count``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import DailyUsers, UsersCountAnswer
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading


class UsersCount(AnalyticsReading):
    """Distinct users of one handle over the period (a user counted once however many days
    they searched), and per day (0 included)."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> UsersCountAnswer:
        period = self.period(request, access)
        total, days = await self._store.users(period.handle, period.start, period.end,
                                              segment=period.segment)
        per_day = {d.day: d.users for d in days}
        return UsersCountAnswer(count=total, dates=[
            DailyUsers(date=day.isoformat(), count=per_day.get(day, 0))
            for day in period.days()])
