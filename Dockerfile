# Production-like image: gunicorn serves the app, the same image runs the Celery worker and beat.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=config.settings.production VAR_DIR=/var/lib/bench
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
# collectstatic needs settings, not the real key: a random one, used once and thrown away
RUN SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')" ALLOWED_HOSTS=build \
    python manage.py collectstatic --noinput
RUN useradd --create-home bench && mkdir -p /var/lib/bench && chown bench /var/lib/bench
USER bench
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
